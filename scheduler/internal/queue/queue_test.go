package queue

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	clocktesting "k8s.io/utils/clock/testing"

	"trireme.dev/scheduler/internal/framework"
)

func newQueue(clock *clocktesting.FakeClock, events map[string][]fwk.ClusterEventWithHint) *Queue {
	return New(Options{
		Less: func(a, b fwk.QueuedEntityInfo) bool {
			return a.GetPriority() > b.GetPriority() || a.GetPriority() == b.GetPriority() && a.GetTimestamp().Before(b.GetTimestamp())
		},
		InitialBackoff: time.Second,
		MaxBackoff:     10 * time.Second,
		PreEnqueue: func(_ context.Context, p *v1.Pod) *fwk.Status {
			if len(p.Spec.SchedulingGates) > 0 {
				return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "gated").WithPlugin("SchedulingGates")
			}
			return nil
		},
		Events: events,
		Clock:  clock,
	})
}

func pop(t *testing.T, q *Queue) *framework.QueuedPodInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	go func() { <-ctx.Done(); q.cond.Broadcast() }()
	qpi, err := q.Pop(ctx)
	if err != nil {
		t.Fatalf("Pop: %v", err)
	}
	return qpi
}

func TestPopOrder(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Now())
	q := newQueue(clock, nil)
	ctx := context.Background()
	q.Add(ctx, withPriority(testPod("low", "", ""), 1))
	clock.Step(time.Millisecond)
	q.Add(ctx, withPriority(testPod("high", "", ""), 10))
	clock.Step(time.Millisecond)
	q.Add(ctx, withPriority(testPod("low2", "", ""), 1))
	for _, want := range []string{"high", "low", "low2"} {
		if got := pop(t, q).Pod.Name; got != want {
			t.Errorf("popped %s, want %s", got, want)
		}
	}
}

func TestBackoffDoubles(t *testing.T) {
	q := newQueue(clocktesting.NewFakeClock(time.Now()), nil)
	for attempts, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 5: 10 * time.Second, 9: 10 * time.Second} {
		if got := q.backoffDuration(&framework.QueuedPodInfo{Attempts: attempts}); got != want {
			t.Errorf("attempt %d: back-off %v, want %v", attempts, got, want)
		}
	}
}

func TestUnschedulableMovedByRelevantEventsOnly(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Now())
	events := map[string][]fwk.ClusterEventWithHint{
		"NodeResourcesFit": {{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAllocatable}}},
		"TaintToleration": {{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeTaint}, QueueingHintFn: func(_ klog.Logger, _ *v1.Pod, _, newObj any) (fwk.QueueingHint, error) {
			if n, ok := newObj.(*v1.Node); ok && len(n.Spec.Taints) == 0 {
				return fwk.Queue, nil
			}
			return fwk.QueueSkip, nil
		}}},
	}
	q := newQueue(clock, events)
	ctx := context.Background()
	q.Add(ctx, testPod("p", "", ""))
	qpi := pop(t, q)
	qpi.UnschedulablePlugins = sets.New("NodeResourcesFit")
	q.AddUnschedulableIfNotPresent(qpi, q.Cycle())
	if got := q.Has(qpi.Pod); got != "unschedulable" {
		t.Fatalf("pod in %q, want unschedulable", got)
	}
	q.MoveAllToActiveOrBackoffQueue(ctx, fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeLabel}, nil, nil)
	if got := q.Has(qpi.Pod); got != "unschedulable" {
		t.Fatalf("a label change moved the pod to %q", got)
	}
	q.MoveAllToActiveOrBackoffQueue(ctx, fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}, nil, testNode("n", "1"))
	if got := q.Has(qpi.Pod); got != "backoff" {
		t.Fatalf("after a node add the pod is in %q, want backoff", got)
	}
	clock.Step(2 * time.Second)
	q.flushBackoff()
	if got := q.Has(qpi.Pod); got != "active" {
		t.Fatalf("after back-off the pod is in %q, want active", got)
	}

	// Queueing hints decide for the plugins that give them.
	qpi = pop(t, q)
	qpi.UnschedulablePlugins = sets.New("TaintToleration")
	q.AddUnschedulableIfNotPresent(qpi, q.Cycle())
	tainted := testNode("n", "1")
	tainted.Spec.Taints = []v1.Taint{{Key: "k", Effect: v1.TaintEffectNoSchedule}}
	q.MoveAllToActiveOrBackoffQueue(ctx, fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeTaint}, nil, tainted)
	if got := q.Has(qpi.Pod); got != "unschedulable" {
		t.Fatalf("hint said skip, yet the pod moved to %q", got)
	}
	q.MoveAllToActiveOrBackoffQueue(ctx, fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeTaint}, tainted, testNode("n", "1"))
	if got := q.Has(qpi.Pod); got == "unschedulable" {
		t.Fatalf("hint said queue, yet the pod stayed unschedulable")
	}
}

func TestEventDuringAttemptSendsPodToBackoff(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Now())
	q := newQueue(clock, map[string][]fwk.ClusterEventWithHint{"X": {{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}}}})
	ctx := context.Background()
	q.Add(ctx, testPod("p", "", ""))
	qpi := pop(t, q)
	cycle := q.Cycle()
	q.MoveAllToActiveOrBackoffQueue(ctx, fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}, nil, nil)
	qpi.UnschedulablePlugins = sets.New("X")
	q.AddUnschedulableIfNotPresent(qpi, cycle)
	if got := q.Has(qpi.Pod); got != "backoff" {
		t.Errorf("pod in %q, want backoff: the node added while it was scheduled may help", got)
	}
}

func TestGatedPods(t *testing.T) {
	q := newQueue(clocktesting.NewFakeClock(time.Now()), nil)
	ctx := context.Background()
	p := testPod("p", "", "")
	p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "g"}}
	q.Add(ctx, p)
	if got := q.Has(p); got != "gated" {
		t.Fatalf("pod in %q, want gated", got)
	}
	if _, _, _, gated := q.Lengths(); gated != 1 {
		t.Errorf("gated count %d", gated)
	}
	open := p.DeepCopy()
	open.Spec.SchedulingGates = nil
	q.Update(ctx, p, open)
	if got := q.Has(open); got != "active" {
		t.Fatalf("ungated pod in %q, want active", got)
	}
}

func TestDeleteAndNominator(t *testing.T) {
	q := newQueue(clocktesting.NewFakeClock(time.Now()), nil)
	ctx := context.Background()
	p := testPod("p", "", "")
	q.Add(ctx, p)
	q.AddNominatedPod(klog.Background(), framework.NewPodInfo(p), &fwk.NominatingInfo{NominatedNodeName: "n1", NominatingMode: fwk.ModeOverride})
	if got := q.NominatedPodsForNode("n1"); len(got) != 1 {
		t.Fatalf("nominated pods on n1: %d", len(got))
	}
	q.Delete(p)
	if got := q.Has(p); got != "" {
		t.Errorf("deleted pod still in %q", got)
	}
	if got := q.NominatedPodsForNode("n1"); len(got) != 0 {
		t.Errorf("deleted pod still nominated")
	}
}

func testPod(name, _, _ string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)}}
}

func withPriority(p *v1.Pod, prio int32) *v1.Pod {
	p.Spec.Priority = &prio
	return p
}

func testNode(name, _ string) *v1.Node { return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}} }
