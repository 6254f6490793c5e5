package podtopologyspread

import (
	"fmt"
	"maps"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// isSchedulableAfterPodChange is the queueing hint for assigned pods, as
// upstream's: only a pod of the same namespace whose labels match (or
// matched) a DoNotSchedule constraint's selector changes the counts.
func (p *Plugin) isSchedulableAfterPodChange(_ klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, _ := oldObj.(*v1.Pod)
	cur, _ := newObj.(*v1.Pod)
	if old == nil && cur == nil {
		return fwk.Queue, fmt.Errorf("expected a Pod, got %T and %T", oldObj, newObj)
	}
	cs, err := p.constraints(pod, v1.DoNotSchedule)
	if err != nil {
		return fwk.Queue, err
	}
	if old != nil && cur != nil && maps.Equal(old.Labels, cur.Labels) {
		return fwk.QueueSkip, nil
	}
	for _, changed := range []*v1.Pod{old, cur} {
		if changed != nil && changed.Namespace == pod.Namespace && matchesAny(cs, changed) {
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}

func matchesAny(cs []constraint, pod *v1.Pod) bool {
	for _, c := range cs {
		if c.selector.Matches(labels.Set(pod.Labels)) {
			return true
		}
	}
	return false
}

// isSchedulableAfterNodeChange is the queueing hint for nodes, as
// upstream's: only a node that has (or had) every DoNotSchedule
// constraint's topology key adds, removes or moves a domain.
func (p *Plugin) isSchedulableAfterNodeChange(_ klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, _ := oldObj.(*v1.Node)
	cur, _ := newObj.(*v1.Node)
	if old == nil && cur == nil {
		return fwk.Queue, fmt.Errorf("expected a Node, got %T and %T", oldObj, newObj)
	}
	cs, err := p.constraints(pod, v1.DoNotSchedule)
	if err != nil {
		return fwk.Queue, err
	}
	if len(cs) == 0 {
		return fwk.QueueSkip, nil
	}
	if hasKeys(cs, old) || hasKeys(cs, cur) {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// hasKeys reports whether node has every constraint's topology key.
func hasKeys(cs []constraint, node *v1.Node) bool {
	if node == nil {
		return false
	}
	for _, c := range cs {
		if _, ok := node.Labels[c.key]; !ok {
			return false
		}
	}
	return true
}
