package deployment

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"trireme.dev/controller-manager/internal/fakecluster"
	"trireme.dev/controller-manager/internal/ownership"
)

func deploy(replicas int32, image string, surge, unavailable intstr.IntOrString) *appsv1.Deployment {
	labels := map[string]string{"app": "web"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "d-uid", Generation: 1},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable}},
			RevisionHistoryLimit:    ptr.To(int32(10)),
			ProgressDeadlineSeconds: ptr.To(int32(600)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}},
			},
		},
	}
}

// replicaSetOf is d's ReplicaSet for its current template, sized and
// fully available at size.
func replicaSetOf(d *appsv1.Deployment, size int32, revision string) *appsv1.ReplicaSet {
	hash := templateHash(&d.Spec.Template, nil)
	t := *d.Spec.Template.DeepCopy()
	t.Labels = cloneStrings(t.Labels)
	t.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-" + hash, Namespace: "ns", UID: types.UID("rs-uid" + revision), Labels: t.Labels,
			OwnerReferences: []metav1.OwnerReference{ownership.Ref(d, Kind)},
			Annotations:     map[string]string{RevisionAnnotation: revision, DesiredReplicasAnnotation: fmt.Sprint(*d.Spec.Replicas)}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(size), Template: t,
			Selector: &metav1.LabelSelector{MatchLabels: t.Labels}},
		Status: appsv1.ReplicaSetStatus{Replicas: size, ReadyReplicas: size, AvailableReplicas: size},
	}
}

func TestFenceposts(t *testing.T) {
	tests := []struct {
		name                       string
		replicas                   int32
		surge, unavailable         intstr.IntOrString
		wantSurge, wantUnavailable int32
	}{
		{"percent rounds surge up and unavailable down", 10, intstr.FromString("25%"), intstr.FromString("25%"), 3, 2},
		{"both zero makes unavailable one", 3, intstr.FromInt32(0), intstr.FromInt32(0), 0, 1},
		{"unavailable capped at replicas", 2, intstr.FromInt32(1), intstr.FromInt32(5), 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := deploy(tt.replicas, "a", tt.surge, tt.unavailable)
			if s, u := maxSurge(d), maxUnavailable(d); s != tt.wantSurge || u != tt.wantUnavailable {
				t.Errorf("surge, unavailable = %d, %d, want %d, %d", s, u, tt.wantSurge, tt.wantUnavailable)
			}
		})
	}
}

func TestSync(t *testing.T) {
	old := deploy(10, "a", intstr.FromInt32(2), intstr.FromInt32(1))
	rolled := deploy(10, "b", intstr.FromInt32(2), intstr.FromInt32(1))
	rolled.Generation = 2
	stuck := deploy(10, "a", intstr.FromInt32(2), intstr.FromInt32(1))
	stuckRS := replicaSetOf(stuck, 10, "1")
	stuckRS.Status.ReadyReplicas, stuckRS.Status.AvailableReplicas = 0, 0
	stuck.Annotations = map[string]string{RevisionAnnotation: "1"}
	stuck.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 10, UpdatedReplicas: 10, UnavailableReplicas: 10,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: ReplicaSetUpdatedReason,
			LastUpdateTime: metav1.NewTime(time.Now().Add(-time.Hour)), LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour))}}}
	mismatch := deploy(1, "a", intstr.FromInt32(1), intstr.FromInt32(0))
	mismatch.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
	tests := []struct {
		name      string
		objs      []runtime.Object
		check     func(t *testing.T, rsList []appsv1.ReplicaSet, d *appsv1.Deployment)
		wantEvent string
	}{
		{
			name: "first sync creates revision 1 at full size",
			objs: []runtime.Object{deploy(3, "a", intstr.FromInt32(1), intstr.FromInt32(0))},
			check: func(t *testing.T, rsList []appsv1.ReplicaSet, d *appsv1.Deployment) {
				if len(rsList) != 1 {
					t.Fatalf("replicasets = %d, want 1", len(rsList))
				}
				rs := rsList[0]
				if *rs.Spec.Replicas != 3 || rs.Annotations[RevisionAnnotation] != "1" || rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey] == "" {
					t.Errorf("replicaset %s: replicas %d annotations %v labels %v", rs.Name, *rs.Spec.Replicas, rs.Annotations, rs.Labels)
				}
				if d.Annotations[RevisionAnnotation] != "1" {
					t.Errorf("deployment revision = %q", d.Annotations[RevisionAnnotation])
				}
			},
		},
		{
			// New pods up to maxSurge, old ones down to maxUnavailable.
			name: "new template surges by maxSurge and drains by maxUnavailable",
			objs: []runtime.Object{rolled, replicaSetOf(old, 10, "1")},
			check: func(t *testing.T, rsList []appsv1.ReplicaSet, d *appsv1.Deployment) {
				var total int32
				for _, rs := range rsList {
					total += *rs.Spec.Replicas
					if rs.Spec.Template.Spec.Containers[0].Image == "b" && (*rs.Spec.Replicas != 2 || rs.Annotations[RevisionAnnotation] != "2") {
						t.Errorf("new replicaset: replicas %d revision %s, want 2 and 2", *rs.Spec.Replicas, rs.Annotations[RevisionAnnotation])
					}
				}
				if total != 11 {
					t.Errorf("total replicas %d, want 11 (old 9, new 2)", total)
				}
			},
		},
		{
			name: "complete rollout reports available and progressed",
			objs: []runtime.Object{old, replicaSetOf(old, 10, "1")},
			check: func(t *testing.T, _ []appsv1.ReplicaSet, d *appsv1.Deployment) {
				p, a := getCondition(d.Status, appsv1.DeploymentProgressing), getCondition(d.Status, appsv1.DeploymentAvailable)
				if p == nil || p.Reason != NewRSAvailableReason || a == nil || a.Status != corev1.ConditionTrue {
					t.Errorf("conditions %+v", d.Status.Conditions)
				}
				if d.Status.UpdatedReplicas != 10 || d.Status.AvailableReplicas != 10 {
					t.Errorf("status %+v", d.Status)
				}
			},
		},
		{
			name: "no progress past progressDeadlineSeconds times out",
			objs: []runtime.Object{stuck, stuckRS},
			check: func(t *testing.T, _ []appsv1.ReplicaSet, d *appsv1.Deployment) {
				p := getCondition(d.Status, appsv1.DeploymentProgressing)
				if p == nil || p.Status != corev1.ConditionFalse || p.Reason != TimedOutReason {
					t.Errorf("Progressing = %+v, want False/%s", p, TimedOutReason)
				}
			},
		},
		{
			name:      "selector that does not match the template is a warning",
			objs:      []runtime.Object{mismatch},
			wantEvent: "Warning SelectorMismatch",
			check: func(t *testing.T, rsList []appsv1.ReplicaSet, _ *appsv1.Deployment) {
				if len(rsList) != 0 {
					t.Errorf("created %d replicasets for a malformed deployment", len(rsList))
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fakecluster.Client(tt.objs...)
			f := informers.NewSharedInformerFactory(cs, 0)
			rec := record.NewFakeRecorder(100)
			apps := f.Apps().V1()
			c, err := New(Options{Client: cs, Deployments: apps.Deployments(), ReplicaSets: apps.ReplicaSets(), Pods: f.Core().V1().Pods(), Recorder: rec})
			if err != nil {
				t.Fatal(err)
			}
			fakecluster.Start(t, f)
			if err := c.sync(context.Background(), "ns/web"); err != nil {
				t.Fatalf("sync: %v", err)
			}
			rsList, _ := cs.AppsV1().ReplicaSets("ns").List(context.Background(), metav1.ListOptions{})
			d, _ := cs.AppsV1().Deployments("ns").Get(context.Background(), "web", metav1.GetOptions{})
			tt.check(t, rsList.Items, d)
			if tt.wantEvent != "" {
				found := false
				for len(rec.Events) > 0 {
					found = found || strings.HasPrefix(<-rec.Events, tt.wantEvent)
				}
				if !found {
					t.Errorf("no %q event", tt.wantEvent)
				}
			}
		})
	}
}
