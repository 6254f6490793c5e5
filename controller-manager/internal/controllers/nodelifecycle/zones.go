package nodelifecycle

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/flowcontrol"
)

// zoneState is how disrupted a zone is.
type zoneState string

const (
	stateInitial           zoneState = "Initial"
	stateNormal            zoneState = "Normal"
	statePartialDisruption zoneState = "PartialDisruption"
	stateFullDisruption    zoneState = "FullDisruption"
)

// disruptionPlan is what a change of zone states asks of the controller.
type disruptionPlan int

const (
	noChange disruptionPlan = iota
	enteringFullDisruption
	leavingFullDisruption
)

// zoneRates are the node lifecycle flags that set eviction rates.
type zoneRates struct {
	normal, secondary float32
	largeCluster      int
	unhealthy         float32
}

// zone is one failure domain's state and its queue of nodes waiting for a
// NoExecute taint.
type zone struct {
	state   zoneState
	limiter flowcontrol.RateLimiter
	queue   []string
}

// zones holds every zone the controller has seen; callers hold the
// controller's lock.
type zones struct {
	rates zoneRates
	byKey map[string]*zone
}

func newZones(r zoneRates) *zones { return &zones{rates: r, byKey: map[string]*zone{}} }

// zoneOf names the node's failure domain from its topology labels.
func zoneOf(node *corev1.Node) string {
	region := node.Labels[corev1.LabelTopologyRegion]
	z := node.Labels[corev1.LabelTopologyZone]
	if region == "" && z == "" {
		return ""
	}
	return region + ":\x00:" + z
}

func (zs *zones) ensure(key string) *zone {
	z := zs.byKey[key]
	if z == nil {
		z = &zone{state: stateInitial, limiter: limiter(zs.rates.normal)}
		zs.byKey[key] = z
	}
	return z
}

func limiter(qps float32) flowcontrol.RateLimiter {
	if qps <= 0 {
		return flowcontrol.NewFakeNeverRateLimiter()
	}
	// Burst 1, as upstream: a zone never taints a batch at once.
	return flowcontrol.NewTokenBucketRateLimiter(qps, 1)
}

// enqueue queues node for a NoExecute taint in its zone, once.
func (zs *zones) enqueue(key, node string) {
	z := zs.ensure(key)
	if !slices.Contains(z.queue, node) {
		z.queue = append(z.queue, node)
	}
}

// forget drops node from every queue.
func (zs *zones) forget(node string) {
	for _, z := range zs.byKey {
		z.queue = slices.DeleteFunc(z.queue, func(n string) bool { return n == node })
	}
}

// drain offers each zone's queued nodes, in order, to taint while the
// zone's limiter admits them; taint returns false to keep a node queued.
func (zs *zones) drain(taint func(node string) bool) {
	for _, z := range zs.byKey {
		for len(z.queue) > 0 && z.limiter.TryAccept() {
			node := z.queue[0]
			z.queue = z.queue[1:]
			if !taint(node) {
				z.queue = append(z.queue, node)
				break
			}
		}
	}
}

// computeState classifies a zone by its nodes' Ready conditions: fully
// disrupted when none is ready, partially when at least three and the
// unhealthy fraction are not.
func (zs *zones) computeState(conds []*corev1.NodeCondition) zoneState {
	ready, notReady := 0, 0
	for _, c := range conds {
		if c != nil && c.Status == corev1.ConditionTrue {
			ready++
		} else {
			notReady++
		}
	}
	switch {
	case ready == 0 && notReady > 0:
		return stateFullDisruption
	case notReady > 2 && float32(notReady)/float32(notReady+ready) >= zs.rates.unhealthy:
		return statePartialDisruption
	default:
		return stateNormal
	}
}

// rateFor is a zone's eviction rate in a state.
func (zs *zones) rateFor(state zoneState, size int) float32 {
	if state == statePartialDisruption {
		if size > zs.rates.largeCluster {
			return zs.rates.secondary
		}
		return 0
	}
	return zs.rates.normal
}

// plan moves every zone to its new state, re-rating the limiters, and
// says whether the cluster as a whole entered or left full disruption.
func (zs *zones) plan(byZone map[string][]*corev1.NodeCondition) disruptionPlan {
	next := map[string]zoneState{}
	allFull := len(byZone) > 0
	for key, conds := range byZone {
		s := zs.computeState(conds)
		next[key] = s
		if s != stateFullDisruption {
			allFull = false
		}
		zs.ensure(key)
	}
	wasFull := true
	for key, z := range zs.byKey {
		if _, ok := byZone[key]; !ok {
			delete(zs.byKey, key)
			continue
		}
		if z.state != stateFullDisruption {
			wasFull = false
		}
	}
	switch {
	case allFull && wasFull:
		return noChange
	case allFull:
		for _, z := range zs.byKey {
			z.limiter = limiter(0)
			z.state = stateFullDisruption
			z.queue = nil
		}
		return enteringFullDisruption
	}
	for key, s := range next {
		z := zs.byKey[key]
		if wasFull || z.state != s {
			z.limiter = limiter(zs.rateFor(s, len(byZone[key])))
		}
		z.state = s
	}
	if wasFull && len(zs.byKey) > 0 {
		return leavingFullDisruption
	}
	return noChange
}
