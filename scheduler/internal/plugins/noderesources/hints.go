package noderesources

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/framework"
)

// isSchedulableAfterPodChange is the queueing hint for assigned pods, as
// upstream's: a deleted pod frees room (at least a pod slot), and a pod
// scaled down helps only when it now requests less of something the
// waiting pod requests.
func isSchedulableAfterPodChange(_ klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, _ := oldObj.(*v1.Pod)
	cur, _ := newObj.(*v1.Pod)
	if cur == nil {
		if old == nil {
			return fwk.Queue, fmt.Errorf("expected a Pod, got %T", oldObj)
		}
		if old.Spec.NodeName == "" {
			return fwk.QueueSkip, nil
		}
		return fwk.Queue, nil
	}
	if old == nil || cur.Spec.NodeName == "" {
		return fwk.QueueSkip, nil
	}
	if lessOfWanted(podRequest(pod), podRequest(old), podRequest(cur)) {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// isSchedulableAfterNodeChange is the queueing hint for nodes, as
// upstream's: the node must hold the pod's requests when empty, and an
// updated node must have more of a resource the pod requests than before.
func isSchedulableAfterNodeChange(_ klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	node, ok := newObj.(*v1.Node)
	if !ok {
		return fwk.Queue, fmt.Errorf("expected a Node, got %T", newObj)
	}
	req := podRequest(pod)
	alloc := allocatable(node)
	if alloc.AllowedPodNumber < 1 || !covers(alloc, req) {
		return fwk.QueueSkip, nil
	}
	old, ok := oldObj.(*v1.Node)
	if !ok || old == nil {
		return fwk.Queue, nil
	}
	if lessOfWanted(req, alloc, allocatable(old)) {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

func allocatable(node *v1.Node) *framework.Resource {
	r := &framework.Resource{}
	r.Add(node.Status.Allocatable)
	return r
}

// covers reports whether have holds every amount want asks for.
func covers(have, want *framework.Resource) bool {
	if want.MilliCPU > have.MilliCPU || want.Memory > have.Memory || want.EphemeralStorage > have.EphemeralStorage {
		return false
	}
	for name, v := range want.ScalarResources {
		if v > have.ScalarResources[name] {
			return false
		}
	}
	return true
}

// lessOfWanted reports whether b has less than a of a resource that want
// asks for.
func lessOfWanted(want, a, b *framework.Resource) bool {
	if want.MilliCPU > 0 && b.MilliCPU < a.MilliCPU ||
		want.Memory > 0 && b.Memory < a.Memory ||
		want.EphemeralStorage > 0 && b.EphemeralStorage < a.EphemeralStorage {
		return true
	}
	for name, v := range want.ScalarResources {
		if v > 0 && b.ScalarResources[name] < a.ScalarResources[name] {
			return true
		}
	}
	return false
}
