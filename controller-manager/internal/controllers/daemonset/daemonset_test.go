package daemonset

import (
	"context"
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/fakecluster"
)

func daemonSet(nodeSelector map[string]string) *appsv1.DaemonSet {
	labels := map[string]string{"app": "agent"}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns", UID: "ds-uid"},
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: labels},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{NodeSelector: nodeSelector, Containers: []corev1.Container{{Name: "a", Image: "i"}}},
			},
		},
	}
}

func node(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
}

func TestShouldRun(t *testing.T) {
	tests := []struct {
		name      string
		ds        *appsv1.DaemonSet
		node      *corev1.Node
		run, keep bool
	}{
		{"plain node", daemonSet(nil), node("n", nil), true, true},
		{"selector mismatch", daemonSet(map[string]string{"role": "edge"}), node("n", nil), false, false},
		{"selector match", daemonSet(map[string]string{"role": "edge"}), node("n", map[string]string{"role": "edge"}), true, true},
		{"untolerated NoSchedule keeps running pods", daemonSet(nil), node("n", nil, corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoSchedule}), false, true},
		{"untolerated NoExecute evicts", daemonSet(nil), node("n", nil, corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoExecute}), false, false},
		{"not-ready NoExecute is tolerated by default", daemonSet(nil), node("n", nil, corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}), true, true},
		{"unschedulable is tolerated by default", daemonSet(nil), node("n", nil, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}), true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if run, keep := shouldRun(tt.ds, tt.node); run != tt.run || keep != tt.keep {
				t.Errorf("shouldRun = %v, %v, want %v, %v", run, keep, tt.run, tt.keep)
			}
		})
	}
}

func TestSyncPinsOnePodPerNode(t *testing.T) {
	objs := []runtime.Object{
		daemonSet(nil),
		node("n1", nil), node("n2", nil),
		node("tainted", nil, corev1.Taint{Key: "k", Effect: corev1.TaintEffectNoSchedule}),
	}
	cs := fakecluster.Client(objs...)
	f := informers.NewSharedInformerFactory(cs, 0)
	apps, core := f.Apps().V1(), f.Core().V1()
	c, err := New(Options{Client: cs, DaemonSets: apps.DaemonSets(), Pods: core.Pods(), Nodes: core.Nodes(),
		Revisions: apps.ControllerRevisions(), Recorder: record.NewFakeRecorder(100)})
	if err != nil {
		t.Fatal(err)
	}
	fakecluster.Start(t, f)
	if err := c.sync(context.Background(), "ns/agent"); err != nil {
		t.Fatalf("sync: %v", err)
	}
	pods, _ := cs.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
	var nodes []string
	for _, p := range pods.Items {
		nodes = append(nodes, targetNode(&p))
		if p.Labels[appsv1.ControllerRevisionHashLabelKey] == "" {
			t.Errorf("pod %s lacks the revision hash label", p.Name)
		}
		if !slices.ContainsFunc(p.Spec.Tolerations, func(t corev1.Toleration) bool { return t.Key == corev1.TaintNodeUnreachable }) {
			t.Errorf("pod %s lacks the default tolerations: %v", p.Name, p.Spec.Tolerations)
		}
	}
	slices.Sort(nodes)
	if fmt.Sprint(nodes) != "[n1 n2]" {
		t.Errorf("pods on %v, want [n1 n2]", nodes)
	}
	ds, _ := cs.AppsV1().DaemonSets("ns").Get(context.Background(), "agent", metav1.GetOptions{})
	if ds.Status.DesiredNumberScheduled != 2 {
		t.Errorf("desiredNumberScheduled = %d, want 2", ds.Status.DesiredNumberScheduled)
	}
}
