package scheduler_test

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func TestPodsLandOnFittingNodes(t *testing.T) {
	cs := srv.Clientset(t)
	createNodes(t, cs, nodeSpec{name: "fit-small", cpu: "1"}, nodeSpec{name: "fit-large", cpu: "4"})
	ns := namespace(t, cs)
	createPod(t, cs, ns, pod("big", "3"))
	if node := waitScheduled(t, cs, ns, "big", 10*time.Second); node != "fit-large" {
		t.Errorf("pod requesting 3 CPUs went to %s, want fit-large", node)
	}
	createPod(t, cs, ns, pod("medium", "2"))
	msg := waitFailedScheduling(t, cs, ns, "medium", 10*time.Second)
	want := "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.."
	if msg != want {
		t.Errorf("FailedScheduling message:\n got %q\nwant %q", msg, want)
	}
	cond := podScheduledCondition(t, cs, ns, "medium")
	if cond == nil || cond.Status != v1.ConditionFalse || cond.Reason != v1.PodReasonUnschedulable || !strings.HasPrefix(cond.Message, "0/2 nodes are available") {
		t.Errorf("PodScheduled condition = %+v", cond)
	}
	// A node that fits appears: the pod is scheduled within a second.
	start := time.Now()
	createNodes(t, cs, nodeSpec{name: "fit-new", cpu: "2"})
	if node := waitScheduled(t, cs, ns, "medium", 5*time.Second); node != "fit-new" {
		t.Errorf("pod went to %s, want fit-new", node)
	}
	if d := time.Since(start); d > time.Second+500*time.Millisecond {
		t.Errorf("pod scheduled %v after the node appeared; want about a second at most", d)
	}
}
