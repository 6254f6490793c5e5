package controllermanager_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// daemonNodes returns the nodes ds's pods in ns are pinned to, sorted.
func daemonNodes(ctx context.Context, cs kubernetes.Interface, ns string) ([]string, error) {
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var nodes []string
	for _, p := range list.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		a := p.Spec.Affinity
		if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
			return nil, fmt.Errorf("pod %s is not pinned to a node", p.Name)
		}
		nodes = append(nodes, a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values[0])
	}
	slices.Sort(nodes)
	return nodes, nil
}

func TestDaemonSetFollowsNodes(t *testing.T) {
	cs := srv.Clientset(t)
	ns := newNamespace(t, cs, "ds")
	ctx := context.Background()
	startKubelet(t, cs, ns, running, nil)
	prefix := ns // node names unique to this test
	node := func(i int) string { return fmt.Sprintf("%s-node-%d", prefix, i) }
	addNode := func(i int) {
		t.Helper()
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node(i), Labels: map[string]string{"e2e-ds": prefix}}}
		created, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), n.Name, metav1.DeleteOptions{}) })
		// Admission taints a new node not-ready until node lifecycle sees
		// it Ready; with no kubelet here, the test lifts the taint itself.
		// The node lifecycle controller writes the new node too: retry on
		// conflict.
		if len(created.Spec.Taints) > 0 {
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				cur, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				cur.Spec.Taints = nil
				_, err = cs.CoreV1().Nodes().Update(ctx, cur, metav1.UpdateOptions{})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	addNode(0)
	addNode(1)
	labels := map[string]string{"app": "agent"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					// Only this test's nodes: other tests' nodes may exist.
					NodeSelector: map[string]string{"e2e-ds": prefix},
					Containers:   []corev1.Container{{Name: "agent", Image: "registry.example/agent:1"}},
				},
			},
		},
	}
	if _, err := cs.AppsV1().DaemonSets(ns).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantNodes := func(what string, want ...string) {
		t.Helper()
		var got []string
		waitForIn(t, ns, 30*time.Second, what, func(ctx context.Context) (bool, error) {
			var err error
			got, err = daemonNodes(ctx, cs, ns)
			return err == nil && slices.Equal(got, want), err
		})
	}
	wantNodes("a pod on each of two nodes", node(0), node(1))
	rolloutStatus(t, ns, "daemonset/agent")

	addNode(2)
	wantNodes("a pod on the third node", node(0), node(1), node(2))

	if err := cs.CoreV1().Nodes().Delete(ctx, node(1), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	wantNodes("the deleted node's pod to go", node(0), node(2))

	n2, err := cs.CoreV1().Nodes().Get(ctx, node(2), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n2.Spec.Taints = []corev1.Taint{{Key: "e2e/evict", Effect: corev1.TaintEffectNoExecute}}
	if _, err := cs.CoreV1().Nodes().Update(ctx, n2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantNodes("the pod on the NoExecute-tainted node to go", node(0))

	// Node conditions' taints are tolerated by default.
	n0, err := cs.CoreV1().Nodes().Get(ctx, node(0), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n0.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}}
	if _, err := cs.CoreV1().Nodes().Update(ctx, n0, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubectl(t, "-n", ns, "set", "image", "daemonset/agent", "agent=registry.example/agent:2")
	rolloutStatus(t, ns, "daemonset/agent")
	wantNodes("the updated pod to stay on the not-ready node", node(0))
	wantImages(t, ns, "app=agent", "registry.example/agent:2", 1)
}
