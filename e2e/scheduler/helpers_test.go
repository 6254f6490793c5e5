package scheduler_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// nodeSpec describes a node a test creates.
type nodeSpec struct {
	name   string
	cpu    string
	memory string
	pods   string
	labels map[string]string
	taints []v1.Taint
}

// createNodes creates nodes as API objects, plays the node lifecycle
// controller (Ready condition, no not-ready taint), and deletes them when
// the test ends.
func createNodes(t *testing.T, cs kubernetes.Interface, specs ...nodeSpec) {
	t.Helper()
	ctx := context.Background()
	for _, s := range specs {
		if s.pods == "" {
			s.pods = "110"
		}
		if s.memory == "" {
			s.memory = "8Gi"
		}
		labels := map[string]string{v1.LabelHostname: s.name}
		for k, v := range s.labels {
			labels[k] = v
		}
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.name, Labels: labels}, Spec: v1.NodeSpec{Taints: s.taints}}
		created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create node %s: %v", s.name, err)
		}
		name := s.name
		t.Cleanup(func() {
			_ = cs.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
		capacity := v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse(s.cpu),
			v1.ResourceMemory: resource.MustParse(s.memory),
			v1.ResourcePods:   resource.MustParse(s.pods),
		}
		// The controller-manager (node IPAM, lifecycle) writes new nodes
		// too, so each write retries on conflict from a fresh read.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := cs.CoreV1().Nodes().Get(ctx, created.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cur.Status = v1.NodeStatus{
				Capacity:    capacity,
				Allocatable: capacity,
				Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
				Phase:       v1.NodeRunning,
			}
			_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatalf("mark node %s ready: %v", s.name, err)
		}
		// Admission adds the not-ready taint to new nodes; a ready node
		// loses it, as the node lifecycle controller would do.
		if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := cs.CoreV1().Nodes().Get(ctx, created.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			var kept []v1.Taint
			for _, tn := range cur.Spec.Taints {
				if tn.Key != v1.TaintNodeNotReady && tn.Key != v1.TaintNodeUnreachable {
					kept = append(kept, tn)
				}
			}
			if len(kept) == len(cur.Spec.Taints) {
				return nil
			}
			cur.Spec.Taints = kept
			_, err = cs.CoreV1().Nodes().Update(ctx, cur, metav1.UpdateOptions{})
			return err
		}); err != nil {
			t.Fatalf("untaint node %s: %v", s.name, err)
		}
	}
}

// namespace creates a namespace for the test and force-deletes its pods
// when the test ends (no kubelet will confirm graceful deletion).
func namespace(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	if len(name) > 50 {
		name = name[:50]
	}
	name = fmt.Sprintf("%s-%d", name, time.Now().UnixNano()%100000)
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	// ServiceAccount admission needs the default ServiceAccount.
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("namespace %s has no default ServiceAccount: %v", name, err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		zero := int64(0)
		_ = cs.CoreV1().Pods(name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		_ = cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	})
	return name
}

// pod returns a pause pod requesting cpu (and 10Mi of memory).
func pod(name, cpu string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name:      "c",
			Image:     "registry.k8s.io/pause:3.10",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("10Mi")}},
		}}},
	}
}

func createPod(t *testing.T, cs kubernetes.Interface, ns string, p *v1.Pod) *v1.Pod {
	t.Helper()
	created, err := cs.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s: %v", p.Name, err)
	}
	return created
}

// waitScheduled waits for the pod to be bound and returns its node.
func waitScheduled(t *testing.T, cs kubernetes.Interface, ns, name string, timeout time.Duration) string {
	t.Helper()
	var node string
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		node = p.Spec.NodeName
		return node != "", nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s not scheduled within %v", ns, name, timeout)
	}
	return node
}

// waitFailedScheduling waits for a FailedScheduling event on the pod and
// returns its message.
func waitFailedScheduling(t *testing.T, cs kubernetes.Interface, ns, name string, timeout time.Duration) string {
	t.Helper()
	var msg string
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		evs, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{"regarding.name": name, "reason": "FailedScheduling"}.String()})
		if err != nil || len(evs.Items) == 0 {
			return false, nil
		}
		msg = evs.Items[len(evs.Items)-1].Note
		return true, nil
	})
	if err != nil {
		t.Fatalf("no FailedScheduling event for %s/%s within %v", ns, name, timeout)
	}
	return msg
}

// podScheduledCondition returns the pod's PodScheduled condition.
//
// The scheduler records the FailedScheduling event before it writes the
// condition (as upstream does), so a caller that saw the event may be
// early: this waits up to 10 s for the condition to appear.
func podScheduledCondition(t *testing.T, cs kubernetes.Interface, ns, name string) *v1.PodCondition {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get pod: %v", err)
		}
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == v1.PodScheduled {
				return &p.Status.Conditions[i]
			}
		}
		if time.Now().After(deadline) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// assertPending checks the pod stays unbound for d.
func assertPending(t *testing.T, cs kubernetes.Interface, ns, name string, d time.Duration) {
	t.Helper()
	time.Sleep(d)
	p, err := cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pod: %v", err)
	}
	if p.Spec.NodeName != "" {
		t.Fatalf("pod %s was bound to %s; want it pending", name, p.Spec.NodeName)
	}
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
