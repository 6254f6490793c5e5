package tainteviction

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func unreachable(added time.Time) corev1.Taint {
	return corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: added}}
}

func tolerate(key string, seconds *int64) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: seconds}
}

func TestEvictionTime(t *testing.T) {
	seen := t0.Add(time.Minute)
	tests := []struct {
		name        string
		tolerations []corev1.Toleration
		taints      []corev1.Taint
		wantAt      time.Time
		wantOK      bool
	}{
		{"untolerated taint evicts now", nil, []corev1.Taint{unreachable(t0)}, time.Time{}, true},
		{"toleration for ever never evicts", []corev1.Toleration{tolerate(corev1.TaintNodeUnreachable, nil)}, []corev1.Taint{unreachable(t0)}, time.Time{}, false},
		{"tolerationSeconds counts from TimeAdded", []corev1.Toleration{tolerate(corev1.TaintNodeUnreachable, ptr.To[int64](30))}, []corev1.Taint{unreachable(t0)}, t0.Add(30 * time.Second), true},
		{"without TimeAdded counts from first seen", []corev1.Toleration{tolerate(corev1.TaintNodeUnreachable, ptr.To[int64](30))}, []corev1.Taint{{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute}}, seen.Add(30 * time.Second), true},
		{"shortest toleration wins", []corev1.Toleration{tolerate(corev1.TaintNodeUnreachable, ptr.To[int64](300)), tolerate("other", ptr.To[int64](5))},
			[]corev1.Taint{unreachable(t0), {Key: "other", Effect: corev1.TaintEffectNoExecute, TimeAdded: &metav1.Time{Time: t0}}}, t0.Add(5 * time.Second), true},
		{"one untolerated of two evicts now", []corev1.Toleration{tolerate(corev1.TaintNodeUnreachable, nil)},
			[]corev1.Taint{unreachable(t0), {Key: "other", Effect: corev1.TaintEffectNoExecute}}, time.Time{}, true},
		{"negative seconds are zero", []corev1.Toleration{tolerate(corev1.TaintNodeUnreachable, ptr.To[int64](-5))}, []corev1.Taint{unreachable(t0)}, t0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, ok := EvictionTime(tt.tolerations, tt.taints, seen)
			if ok != tt.wantOK || !at.Equal(tt.wantAt) {
				t.Errorf("EvictionTime = %v, %v; want %v, %v", at, ok, tt.wantAt, tt.wantOK)
			}
		})
	}
}

func TestSync(t *testing.T) {
	node := func(taints ...corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	pod := func(tols ...corev1.Toleration) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u"}, Spec: corev1.PodSpec{NodeName: "n", Tolerations: tols}}
	}
	now := t0.Add(10 * time.Second)
	tests := []struct {
		name        string
		objs        []runtime.Object
		wantDeleted bool
	}{
		{"no taint keeps the pod", []runtime.Object{node(), pod()}, false},
		{"untolerated taint evicts", []runtime.Object{node(unreachable(t0)), pod()}, true},
		{"toleration not yet over keeps the pod", []runtime.Object{node(unreachable(t0)), pod(tolerate(corev1.TaintNodeUnreachable, ptr.To[int64](60)))}, false},
		{"toleration over evicts", []runtime.Object{node(unreachable(t0)), pod(tolerate(corev1.TaintNodeUnreachable, ptr.To[int64](5)))}, true},
		{"NoSchedule taints do not evict", []runtime.Object{node(corev1.Taint{Key: "x", Effect: corev1.TaintEffectNoSchedule}), pod()}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			client := fake.NewClientset(tt.objs...)
			factory := informers.NewSharedInformerFactory(client, 0)
			c, err := New(Options{Client: client, Nodes: factory.Core().V1().Nodes(), Pods: factory.Core().V1().Pods(),
				Recorder: record.NewFakeRecorder(10), Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			factory.Start(ctx.Done())
			factory.WaitForCacheSync(ctx.Done())
			if err := c.sync(ctx, "ns/p"); err != nil {
				t.Fatal(err)
			}
			deleted := false
			for _, a := range client.Actions() {
				if a.GetVerb() == "delete" && a.GetResource().Resource == "pods" {
					deleted = true
				}
			}
			if deleted != tt.wantDeleted {
				t.Errorf("deleted = %v, want %v", deleted, tt.wantDeleted)
			}
		})
	}
}
