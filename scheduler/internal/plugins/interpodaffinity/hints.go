package interpodaffinity

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/framework"
)

// isSchedulableAfterPodChange is the queueing hint for assigned pods, as
// upstream's: an added pod helps when it matches all the pod's required
// affinity terms; a relabelled one when it now matches them, or no longer
// matches an anti-affinity term; a deleted one when it matched an
// anti-affinity term, or its own anti-affinity kept the pod out, or it
// was one of the pod's group (its absence may leave the first of a
// self-affine group free to go anywhere).
func (p *Plugin) isSchedulableAfterPodChange(_ klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, _ := oldObj.(*v1.Pod)
	cur, _ := newObj.(*v1.Pod)
	if old == nil && cur == nil {
		return fwk.Queue, fmt.Errorf("expected a Pod, got %T and %T", oldObj, newObj)
	}
	if (old != nil && old.Spec.NodeName == "") || (cur != nil && cur.Spec.NodeName == "") {
		return fwk.QueueSkip, nil
	}
	pi := framework.NewPodInfo(pod)
	if pi.ParseErr != nil {
		return fwk.Queue, pi.ParseErr
	}
	affinity := p.resolve(pi.RequiredAffinityTerms)
	anti := p.resolve(pi.RequiredAntiAffinityTerms)
	switch {
	case old != nil && cur != nil:
		if !matchesAll(affinity, old, nil) && matchesAll(affinity, cur, nil) {
			return fwk.Queue, nil
		}
		if matchesAny(anti, old) && !matchesAny(anti, cur) {
			return fwk.Queue, nil
		}
		return fwk.QueueSkip, nil
	case cur != nil:
		if matchesAll(affinity, cur, nil) {
			return fwk.Queue, nil
		}
		return fwk.QueueSkip, nil
	}
	if matchesAny(anti, old) || matchesAll(affinity, old, nil) {
		return fwk.Queue, nil
	}
	nsLabels := p.nsLabels(pod.Namespace)
	for _, t := range framework.NewPodInfo(old).RequiredAntiAffinityTerms {
		if t.Matches(pod, nsLabels) {
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}

func matchesAny(terms []fwk.AffinityTerm, pod *v1.Pod) bool {
	for i := range terms {
		if terms[i].Matches(pod, nil) {
			return true
		}
	}
	return false
}

// isSchedulableAfterNodeChange is the queueing hint for nodes: a pod with
// required affinity can only land on a node holding every term's topology
// key, so a node without them cannot help it. Any other added or
// relabelled node may open a domain (for the pod's anti-affinity or
// existing pods' anti-affinity, whose keys the hint does not know).
func (p *Plugin) isSchedulableAfterNodeChange(_ klog.Logger, pod *v1.Pod, _, newObj any) (fwk.QueueingHint, error) {
	node, ok := newObj.(*v1.Node)
	if !ok || node == nil {
		return fwk.Queue, fmt.Errorf("expected a Node, got %T", newObj)
	}
	pi := framework.NewPodInfo(pod)
	if pi.ParseErr != nil {
		return fwk.Queue, pi.ParseErr
	}
	for _, t := range pi.RequiredAffinityTerms {
		if _, ok := node.Labels[t.TopologyKey]; !ok {
			return fwk.QueueSkip, nil
		}
	}
	return fwk.Queue, nil
}
