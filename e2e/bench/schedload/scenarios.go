package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// knownScenarios are the values --scenario takes.
var knownScenarios = map[string]bool{
	"basic": true, "antiaffinity": true, "spread": true, "preferred": true, "preemption": true, "churn": true,
}

// The preemption scenario fills every node (32 CPUs) with one
// low-priority pod of lowCPU, so that a high-priority pod of highCPU fits
// only once that pod is gone, and then alone: each preemptor has exactly
// one victim and each node one preemptor.
const (
	lowPriority  = "schedload-low"
	highPriority = "schedload-high"
	lowCPU       = "30"
	highCPU      = "30"
	lowLabel     = "schedload-low"
)

// setupPreemption creates the two PriorityClasses and one low-priority
// pod on each of the first c.pods nodes (bound directly, as a workload
// already running there).
func setupPreemption(ctx context.Context, cs kubernetes.Interface, c config) error {
	for name, value := range map[string]int32{lowPriority: 100, highPriority: 10000} {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		if _, err := cs.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create PriorityClass %s: %w", name, err)
		}
	}
	return parallel(c.pods, c.workers, func(i int) error {
		p := basePod(fmt.Sprintf("low-%06d", i))
		p.Labels = map[string]string{"app": lowLabel}
		p.Spec.PriorityClassName = lowPriority
		p.Spec.NodeName = nodeName(i)
		p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse(lowCPU)
		if _, err := cs.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create low-priority pod %s: %w", p.Name, err)
		}
		return nil
	})
}

// reapVictims plays the kubelet for preemption victims: a low-priority
// pod the scheduler deleted (gracefully) is removed at once, as a kubelet
// would once its containers stopped. It counts the victims in n.
func reapVictims(ctx context.Context, cs kubernetes.Interface, n *atomic.Int64) {
	seen := map[string]bool{}
	rv := ""
	zero := int64(0)
	for ctx.Err() == nil {
		w, err := cs.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, LabelSelector: "app=" + lowLabel})
		if err != nil {
			sleep(ctx, 100*time.Millisecond)
			continue
		}
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*v1.Pod)
			if !ok {
				if ev.Type == watch.Error {
					rv = ""
				}
				continue
			}
			rv = p.ResourceVersion
			if p.DeletionTimestamp == nil || seen[p.Name] {
				continue
			}
			seen[p.Name] = true
			n.Add(1)
			go func() {
				err := cs.CoreV1().Pods(namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &p.UID}})
				if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
					fmt.Printf("schedload: force-delete victim %s: %v\n", p.Name, err)
				}
			}()
		}
		w.Stop()
	}
}

// churnPeriod is how often the churn scenario adds and removes objects.
const churnPeriod = 50 * time.Millisecond

// churnTaint keeps measured pods off the churn scenario's short-lived
// nodes; other pods tolerate it.
var churnTaint = v1.Taint{Key: "schedload.trireme.dev/churn", Effect: v1.TaintEffectNoSchedule}

// churn runs the churn scenario's background load until ctx ends: every
// churnPeriod a node joins (Ready, labelled into a zone) and the one that
// joined ten periods earlier leaves, and an unmeasured pod arrives and an
// earlier one is deleted — the node and assigned-pod events a busy
// cluster sends the scheduler. It returns how many operations it made.
func churn(ctx context.Context, cs kubernetes.Interface, c config) int {
	const keep = 10
	ops := 0
	tick := time.NewTicker(churnPeriod)
	defer tick.Stop()
	zero := int64(0)
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return ops
		case <-tick.C:
		}
		node := &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("schedload-churn-%06d", i), Labels: map[string]string{
				v1.LabelTopologyZone: fmt.Sprintf("zone-%d", i%c.zones), v1.LabelOSStable: "linux",
			}},
			Spec: v1.NodeSpec{Taints: []v1.Taint{churnTaint}},
		}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err == nil {
			ops++
		}
		p := basePod(fmt.Sprintf("churn-%06d", i))
		p.Labels = map[string]string{"app": "schedload-churn"}
		p.Spec.Tolerations = []v1.Toleration{{Key: churnTaint.Key, Operator: v1.TolerationOpExists}}
		if _, err := cs.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{}); err == nil {
			ops++
		}
		if i >= keep {
			old := i - keep
			if err := cs.CoreV1().Nodes().Delete(ctx, fmt.Sprintf("schedload-churn-%06d", old), metav1.DeleteOptions{}); err == nil {
				ops++
			}
			if err := cs.CoreV1().Pods(namespace).Delete(ctx, fmt.Sprintf("churn-%06d", old), metav1.DeleteOptions{GracePeriodSeconds: &zero}); err == nil {
				ops++
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
