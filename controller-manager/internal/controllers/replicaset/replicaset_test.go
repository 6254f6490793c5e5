package replicaset

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
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"trireme.dev/controller-manager/internal/fakecluster"
	"trireme.dev/controller-manager/internal/ownership"
)

func rs(replicas int32, selector map[string]string) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "rs-uid", Generation: 2},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
			},
		},
	}
}

func pod(name string, owner *appsv1.ReplicaSet, ready bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name),
		Labels: map[string]string{"app": "web"}, CreationTimestamp: metav1.NewTime(time.Now().Add(-time.Hour))}}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{ownership.Ref(owner, Kind)}
	}
	p.Status.Phase = corev1.PodRunning
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour))}}
	return p
}

func TestSync(t *testing.T) {
	owner := rs(2, map[string]string{"app": "web"})
	tests := []struct {
		name        string
		rs          *appsv1.ReplicaSet
		pods        []*corev1.Pod
		wantActions []string
		wantDeleted string
		wantStatus  *appsv1.ReplicaSetStatus
		wantEvent   string
	}{
		{
			name:        "creates missing pods",
			rs:          rs(3, map[string]string{"app": "web"}),
			wantActions: []string{"create pods", "create pods", "create pods", "update replicasets/status"},
		},
		{
			name:        "deletes the not-ready surplus pod",
			rs:          rs(1, map[string]string{"app": "web"}),
			pods:        []*corev1.Pod{pod("a", owner, true), pod("b", owner, false)},
			wantActions: []string{"delete pods", "update replicasets/status"},
			wantDeleted: "b",
		},
		{
			name:        "adopts an orphan and counts status",
			rs:          owner,
			pods:        []*corev1.Pod{pod("a", owner, true), pod("orphan", nil, false)},
			wantActions: []string{"patch pods", "update replicasets/status"},
			wantStatus:  &appsv1.ReplicaSetStatus{Replicas: 2, FullyLabeledReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1, ObservedGeneration: 2},
		},
		{
			name:      "empty selector is a warning, not a retry",
			rs:        rs(1, nil),
			wantEvent: "Warning InvalidSelector",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := []runtime.Object{tt.rs}
			for _, p := range tt.pods {
				objs = append(objs, p)
			}
			cs := fakecluster.Client(objs...)
			f := informers.NewSharedInformerFactory(cs, 0)
			rec := record.NewFakeRecorder(100)
			c, err := New(Options{Client: cs, Source: NewReplicaSets(cs, f.Apps().V1().ReplicaSets()), Pods: f.Core().V1().Pods(), Recorder: rec})
			if err != nil {
				t.Fatal(err)
			}
			fakecluster.Start(t, f)
			cs.ClearActions()
			if err := c.sync(context.Background(), "ns/web"); err != nil {
				t.Fatalf("sync: %v", err)
			}
			if got := fakecluster.Actions(cs); fmt.Sprint(got) != fmt.Sprint(tt.wantActions) {
				t.Errorf("actions = %v, want %v", got, tt.wantActions)
			}
			if tt.wantDeleted != "" {
				for _, a := range cs.Actions() {
					if a.GetVerb() == "delete" && !strings.Contains(fmt.Sprint(a), tt.wantDeleted) {
						t.Errorf("deleted %v, want %s", a, tt.wantDeleted)
					}
				}
			}
			if tt.wantStatus != nil {
				got, _ := cs.AppsV1().ReplicaSets("ns").Get(context.Background(), "web", metav1.GetOptions{})
				if fmt.Sprint(got.Status) != fmt.Sprint(*tt.wantStatus) {
					t.Errorf("status = %+v, want %+v", got.Status, *tt.wantStatus)
				}
			}
			if tt.wantEvent != "" {
				select {
				case e := <-rec.Events:
					if !strings.HasPrefix(e, tt.wantEvent) {
						t.Errorf("event %q, want %q", e, tt.wantEvent)
					}
				default:
					t.Errorf("no event, want %q", tt.wantEvent)
				}
			}
		})
	}
}

func TestCreatedPodsAreOwned(t *testing.T) {
	cs := fakecluster.Client(rs(1, map[string]string{"app": "web"}))
	f := informers.NewSharedInformerFactory(cs, 0)
	c, err := New(Options{Client: cs, Source: NewReplicaSets(cs, f.Apps().V1().ReplicaSets()), Pods: f.Core().V1().Pods(), Recorder: record.NewFakeRecorder(10)})
	if err != nil {
		t.Fatal(err)
	}
	fakecluster.Start(t, f)
	if err := c.sync(context.Background(), "ns/web"); err != nil {
		t.Fatal(err)
	}
	list, _ := cs.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	if len(list.Items) != 1 {
		t.Fatalf("pods = %d, want 1", len(list.Items))
	}
	p := list.Items[0]
	if !strings.HasPrefix(p.Name, "web-") || !metav1.IsControlledBy(&p, &metav1.ObjectMeta{UID: "rs-uid"}) {
		t.Errorf("pod %s owners %v", p.Name, p.OwnerReferences)
	}
}
