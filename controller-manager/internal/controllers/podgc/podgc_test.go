package podgc

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
)

var base = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func pod(name, node string, phase corev1.PodPhase, age int, deleting bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(base.Add(time.Duration(age) * time.Minute))},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Phase: phase},
	}
	if deleting {
		t := metav1.NewTime(base)
		p.DeletionTimestamp = &t
		p.Finalizers = []string{"keep"} // lets the fake hold a deleting object
	}
	return p
}

func node(name string, ready bool, taints ...corev1.Taint) *corev1.Node {
	s := corev1.ConditionFalse
	if ready {
		s = corev1.ConditionTrue
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: s}}}}
}

func TestGC(t *testing.T) {
	oos := corev1.Taint{Key: outOfServiceTaint, Effect: corev1.TaintEffectNoExecute}
	tests := []struct {
		name        string
		objs        []runtime.Object
		threshold   int
		wantDeleted []string
	}{
		{"terminated over the threshold, oldest first",
			[]runtime.Object{node("n1", true), pod("old", "n1", corev1.PodSucceeded, 1, false), pod("mid", "n1", corev1.PodFailed, 2, false),
				pod("new", "n1", corev1.PodSucceeded, 3, false), pod("running", "n1", corev1.PodRunning, 0, false)},
			2, []string{"old"}},
		{"threshold 0 keeps terminated pods",
			[]runtime.Object{node("n1", true), pod("old", "n1", corev1.PodSucceeded, 1, false)}, 0, nil},
		{"pods of a deleted node",
			[]runtime.Object{node("n1", true), pod("gone", "n2", corev1.PodRunning, 0, false), pod("here", "n1", corev1.PodRunning, 0, false)},
			0, []string{"gone"}},
		{"unscheduled terminating pod",
			[]runtime.Object{pod("pending", "", corev1.PodPending, 0, true), pod("waiting", "", corev1.PodPending, 0, false)},
			0, []string{"pending"}},
		{"terminating pod on an out-of-service node",
			[]runtime.Object{node("dead", false, oos), node("sick", false), pod("a", "dead", corev1.PodRunning, 0, true),
				pod("b", "sick", corev1.PodRunning, 0, true)},
			0, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			client := fake.NewClientset(tt.objs...)
			f := informers.NewSharedInformerFactory(client, 0)
			c := New(Options{Client: client, Pods: f.Core().V1().Pods(), Nodes: f.Core().V1().Nodes(),
				Recorder: record.NewFakeRecorder(10), Threshold: tt.threshold, Quarantine: 0})
			f.Start(ctx.Done())
			f.WaitForCacheSync(ctx.Done())
			defer f.Shutdown()
			defer cancel()
			if err := c.gc(ctx); err != nil {
				t.Fatalf("gc: %v", err)
			}
			var deleted []string
			for _, a := range client.Actions() {
				if a.GetVerb() == "delete" && a.GetResource().Resource == "pods" {
					deleted = append(deleted, fmt.Sprint(a.(interface{ GetName() string }).GetName()))
				}
			}
			slices.Sort(deleted)
			if !slices.Equal(deleted, tt.wantDeleted) {
				t.Errorf("deleted %v, want %v", deleted, tt.wantDeleted)
			}
		})
	}
}

func TestOrphanQuarantine(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	client := fake.NewClientset(pod("gone", "n2", corev1.PodRunning, 0, false))
	f := informers.NewSharedInformerFactory(client, 0)
	clock := base
	c := New(Options{Client: client, Pods: f.Core().V1().Pods(), Nodes: f.Core().V1().Nodes(), Recorder: record.NewFakeRecorder(10),
		Quarantine: time.Minute, Now: func() time.Time { return clock }})
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	defer f.Shutdown()
	defer cancel()
	count := func() int {
		n := 0
		for _, a := range client.Actions() {
			if a.GetVerb() == "delete" {
				n++
			}
		}
		return n
	}
	if err := c.gc(ctx); err != nil || count() != 0 {
		t.Fatalf("first pass deleted %d (err %v), want none: the node may come back", count(), err)
	}
	clock = clock.Add(2 * time.Minute)
	if err := c.gc(ctx); err != nil || count() != 1 {
		t.Fatalf("after quarantine deleted %d (err %v), want 1", count(), err)
	}
}
