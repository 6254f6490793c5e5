package statefulset

import (
	"context"
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"trireme.dev/controller-manager/internal/fakecluster"
	"trireme.dev/controller-manager/internal/history"
)

func set(policy appsv1.PodManagementPolicyType, retention *appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy) *appsv1.StatefulSet {
	labels := map[string]string{"app": "db"}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", UID: "set-uid"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(int32(3)),
			ServiceName:         "db",
			PodManagementPolicy: policy,
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "i"}}},
			},
			VolumeClaimTemplates:                 []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}},
			PersistentVolumeClaimRetentionPolicy: retention,
		},
	}
}

func TestSyncCreates(t *testing.T) {
	tests := []struct {
		name       string
		set        *appsv1.StatefulSet
		wantPods   []string
		wantClaims []string
		wantOwned  bool
	}{
		{"ordered ready starts ordinal 0 only", set(appsv1.OrderedReadyPodManagement, nil), []string{"db-0"}, []string{"data-db-0"}, false},
		{"parallel starts all", set(appsv1.ParallelPodManagement, nil), []string{"db-0", "db-1", "db-2"}, []string{"data-db-0", "data-db-1", "data-db-2"}, false},
		{"whenDeleted Delete makes the set own its claims", set(appsv1.OrderedReadyPodManagement, &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		}), []string{"db-0"}, []string{"data-db-0"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fakecluster.Client(tt.set)
			f := informers.NewSharedInformerFactory(cs, 0)
			apps, core := f.Apps().V1(), f.Core().V1()
			c, err := New(Options{Client: cs, StatefulSets: apps.StatefulSets(), Pods: core.Pods(), Claims: core.PersistentVolumeClaims(),
				Revisions: apps.ControllerRevisions(), Recorder: record.NewFakeRecorder(100)})
			if err != nil {
				t.Fatal(err)
			}
			fakecluster.Start(t, f)
			if err := c.sync(context.Background(), "ns/db"); err != nil {
				t.Fatalf("sync: %v", err)
			}
			pods, _ := cs.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
			var names []string
			for _, p := range pods.Items {
				names = append(names, p.Name)
				if p.Spec.Hostname != p.Name || p.Spec.Subdomain != "db" || p.Labels[appsv1.ControllerRevisionHashLabelKey] == "" {
					t.Errorf("pod %s: hostname %q subdomain %q labels %v", p.Name, p.Spec.Hostname, p.Spec.Subdomain, p.Labels)
				}
				if i := slices.IndexFunc(p.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "data" }); i < 0 ||
					p.Spec.Volumes[i].PersistentVolumeClaim.ClaimName != "data-"+p.Name {
					t.Errorf("pod %s volumes %v", p.Name, p.Spec.Volumes)
				}
			}
			slices.Sort(names)
			if fmt.Sprint(names) != fmt.Sprint(tt.wantPods) {
				t.Errorf("pods %v, want %v", names, tt.wantPods)
			}
			claims, _ := cs.CoreV1().PersistentVolumeClaims("ns").List(context.Background(), metav1.ListOptions{})
			names = nil
			for _, c := range claims.Items {
				names = append(names, c.Name)
				if owned := len(c.OwnerReferences) == 1 && c.OwnerReferences[0].UID == "set-uid"; owned != tt.wantOwned {
					t.Errorf("claim %s owners %v, want owned by set = %v", c.Name, c.OwnerReferences, tt.wantOwned)
				}
			}
			slices.Sort(names)
			if fmt.Sprint(names) != fmt.Sprint(tt.wantClaims) {
				t.Errorf("claims %v, want %v", names, tt.wantClaims)
			}
			revs, _ := cs.AppsV1().ControllerRevisions("ns").List(context.Background(), metav1.ListOptions{})
			got, _ := cs.AppsV1().StatefulSets("ns").Get(context.Background(), "db", metav1.GetOptions{})
			if len(revs.Items) != 1 || got.Status.UpdateRevision != revs.Items[0].Name || got.Status.Replicas != int32(len(tt.wantPods)) {
				t.Errorf("revisions %d, status %+v", len(revs.Items), got.Status)
			}
		})
	}
}

func TestTemplateOfRoundTrip(t *testing.T) {
	s := set(appsv1.ParallelPodManagement, nil)
	cs := fakecluster.Client(s)
	f := informers.NewSharedInformerFactory(cs, 0)
	apps, core := f.Apps().V1(), f.Core().V1()
	c, err := New(Options{Client: cs, StatefulSets: apps.StatefulSets(), Pods: core.Pods(), Claims: core.PersistentVolumeClaims(),
		Revisions: apps.ControllerRevisions(), Recorder: record.NewFakeRecorder(10)})
	if err != nil {
		t.Fatal(err)
	}
	fakecluster.Start(t, f)
	cur, upd, _, err := c.revisionsFor(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := templateOf(upd)
	if err != nil || cur != upd || tmpl.Spec.Containers[0].Image != "i" {
		t.Errorf("template %+v err %v", tmpl, err)
	}
}

func TestRollingUpdateHonoursPartition(t *testing.T) {
	old := set(appsv1.ParallelPodManagement, nil)
	data, err := history.TemplatePatch(old.Spec.Template)
	if err != nil {
		t.Fatal(err)
	}
	oldRev := history.New(old, Kind, old.Spec.Template.Labels, data, 1, ptr.To(int32(0)))
	s := old.DeepCopy()
	s.Spec.Template.Spec.Containers[0].Image = "new"
	s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To(int32(1))}
	s.Status.CurrentRevision = oldRev.Name
	objs := []runtime.Object{s, oldRev}
	for i := range 3 {
		p, err := newPod(old, oldRev, i)
		if err != nil {
			t.Fatal(err)
		}
		p.UID = types.UID(fmt.Sprintf("pod-%d", i))
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		objs = append(objs, p)
	}
	cs := fakecluster.Client(objs...)
	f := informers.NewSharedInformerFactory(cs, 0)
	apps, core := f.Apps().V1(), f.Core().V1()
	c, err := New(Options{Client: cs, StatefulSets: apps.StatefulSets(), Pods: core.Pods(), Claims: core.PersistentVolumeClaims(),
		Revisions: apps.ControllerRevisions(), Recorder: record.NewFakeRecorder(100)})
	if err != nil {
		t.Fatal(err)
	}
	fakecluster.Start(t, f)
	if err := c.sync(context.Background(), "ns/db"); err != nil {
		t.Fatalf("sync: %v", err)
	}
	pods, _ := cs.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	var left []string
	for _, p := range pods.Items {
		left = append(left, p.Name)
	}
	slices.Sort(left)
	// One unavailable at a time, from the top: db-2 goes; db-0 is below the
	// partition and keeps the old revision.
	if fmt.Sprint(left) != "[db-0 db-1]" {
		t.Errorf("pods left %v, want [db-0 db-1]", left)
	}
	got, _ := cs.AppsV1().StatefulSets("ns").Get(context.Background(), "db", metav1.GetOptions{})
	if got.Status.CurrentRevision != oldRev.Name || got.Status.UpdateRevision == oldRev.Name {
		t.Errorf("revisions current %q update %q", got.Status.CurrentRevision, got.Status.UpdateRevision)
	}
}

// TestOrderedReadyHaltsOnUnhealthyPods follows upstream's conformance spec
// "Scaling should happen in predictable order and halt if any stateful pod
// is unhealthy", and "Should recreate evicted statefulset": one sync over
// pods in the states given ("ready", "unready", "failed") creates and
// deletes what upstream's controller would.
func TestOrderedReadyHaltsOnUnhealthyPods(t *testing.T) {
	tests := []struct {
		name        string
		replicas    int32
		pods        []string
		wantDeleted []string
		wantCreated []string
	}{
		{"scale-up waits for an unready pod", 3, []string{"unready"}, nil, nil},
		{"scale-up goes on after ready pods", 3, []string{"ready", "ready"}, nil, []string{"db-2"}},
		{"scale-down waits while the condemned are unready", 0, []string{"unready", "unready", "unready"}, nil, nil},
		{"scale-down starts from the highest ordinal", 0, []string{"ready", "ready", "ready"}, []string{"db-2"}, nil},
		{"scale-down deletes a ready top pod above an unready one", 1, []string{"ready", "unready", "ready"}, []string{"db-2"}, nil},
		{"scale-down deletes the first unhealthy pod", 1, []string{"ready", "ready", "unready"}, []string{"db-2"}, nil},
		{"scale-down waits for a kept pod that is unready", 1, []string{"unready", "ready", "ready"}, nil, nil},
		{"a failed pod is deleted to be made again", 2, []string{"failed", "ready"}, []string{"db-0"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := set(appsv1.OrderedReadyPodManagement, nil)
			s.Spec.Replicas = ptr.To(tt.replicas)
			s.Spec.VolumeClaimTemplates = nil
			data, err := history.TemplatePatch(s.Spec.Template)
			if err != nil {
				t.Fatal(err)
			}
			rev := history.New(s, Kind, s.Spec.Template.Labels, data, 1, ptr.To(int32(0)))
			s.Status.CurrentRevision, s.Status.UpdateRevision = rev.Name, rev.Name
			objs := []runtime.Object{s, rev}
			for i, state := range tt.pods {
				p, err := newPod(s, rev, i)
				if err != nil {
					t.Fatal(err)
				}
				p.UID = types.UID(fmt.Sprintf("pod-%d", i))
				p.Status.Phase = corev1.PodRunning
				switch state {
				case "ready":
					p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
				case "unready":
					p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
				case "failed":
					p.Status.Phase = corev1.PodFailed
				}
				objs = append(objs, p)
			}
			cs := fakecluster.Client(objs...)
			f := informers.NewSharedInformerFactory(cs, 0)
			apps, core := f.Apps().V1(), f.Core().V1()
			c, err := New(Options{Client: cs, StatefulSets: apps.StatefulSets(), Pods: core.Pods(), Claims: core.PersistentVolumeClaims(),
				Revisions: apps.ControllerRevisions(), Recorder: record.NewFakeRecorder(100)})
			if err != nil {
				t.Fatal(err)
			}
			fakecluster.Start(t, f)
			cs.ClearActions()
			if err := c.sync(context.Background(), "ns/db"); err != nil {
				t.Fatalf("sync: %v", err)
			}
			var deleted, created []string
			for _, a := range cs.Actions() {
				switch a := a.(type) {
				case k8stesting.DeleteAction:
					if a.GetResource().Resource == "pods" {
						deleted = append(deleted, a.GetName())
					}
				case k8stesting.CreateAction:
					if p, ok := a.GetObject().(*corev1.Pod); ok {
						created = append(created, p.Name)
					}
				}
			}
			if fmt.Sprint(deleted) != fmt.Sprint(tt.wantDeleted) || fmt.Sprint(created) != fmt.Sprint(tt.wantCreated) {
				t.Errorf("deleted %v created %v, want deleted %v created %v", deleted, created, tt.wantDeleted, tt.wantCreated)
			}
		})
	}
}
