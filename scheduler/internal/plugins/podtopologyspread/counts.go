package podtopologyspread

import (
	"context"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/framework/nodecounts"
)

// countCache keeps, between scheduling cycles, the matching pods per
// topology domain for the constraint sets pods recently asked about, so
// that a cycle recounts only the nodes whose NodeInfo changed since (one
// node per cycle in a steady stream of pods) rather than every pod on
// every node. It holds only counts that do not depend on the incoming
// pod's own node affinity or tolerations (see cacheable).
type countCache struct {
	nodecounts.Cache[*domainCounts, *nodeCount]
}

// domainCounts are, per constraint, the matching pods and the qualifying
// nodes per domain.
type domainCounts struct {
	counts  []map[string]int
	nodesIn []map[string]int
}

// nodeCount is what one node contributes.
type nodeCount struct {
	in     []bool   // whether the node counts, per constraint
	values []string // its domain, per constraint
	n      []int    // its matching pods, per constraint
}

// cacheable reports whether the counts for cs depend only on the
// namespace and the constraints: taints are ignored and node affinity
// either ignored or absent from the pod.
func cacheable(pod *v1.Pod, cs []constraint) bool {
	hasRequired := len(pod.Spec.NodeSelector) > 0 ||
		(pod.Spec.Affinity != nil && pod.Spec.Affinity.NodeAffinity != nil && pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil)
	for _, c := range cs {
		if c.honorNodeTaints || (c.honorNodeAffinity && hasRequired) {
			return false
		}
	}
	return true
}

func cacheKey(ns string, cs []constraint) string {
	var b strings.Builder
	b.WriteString(ns)
	for _, c := range cs {
		b.WriteByte(0)
		b.WriteString(c.key)
		b.WriteByte(1)
		b.WriteString(c.selector.String())
	}
	return b.String()
}

// counts returns the per-domain counts of cs over all, updated from the
// previous call with the same key. The maps returned are only read until
// the next call.
func (cc *countCache) counts(ctx context.Context, pod *v1.Pod, cs []constraint, required nodeaffinity.RequiredNodeAffinity, all []fwk.NodeInfo) []map[string]int {
	return cc.Get(cacheKey(pod.Namespace, cs), all, nodecounts.Sum[*domainCounts, *nodeCount]{
		Empty: func() *domainCounts {
			e := &domainCounts{counts: make([]map[string]int, len(cs)), nodesIn: make([]map[string]int, len(cs))}
			for i := range cs {
				e.counts[i] = map[string]int{}
				e.nodesIn[i] = map[string]int{}
			}
			return e
		},
		Count: func(ni fwk.NodeInfo, nc *nodeCount) *nodeCount {
			if nc == nil {
				nc = &nodeCount{in: make([]bool, len(cs)), values: make([]string, len(cs)), n: make([]int, len(cs))}
			}
			node := ni.Node()
			for i, c := range cs {
				nc.in[i], nc.values[i], nc.n[i] = false, "", 0
				if !nodeQualifies(ctx, node, cs, c, required, nil) {
					continue
				}
				nc.in[i] = true
				nc.values[i] = node.Labels[c.key]
				nc.n[i] = countMatching(ni.GetPods(), pod.Namespace, c.selector)
			}
			return nc
		},
		Add:      (*domainCounts).add,
		Subtract: (*domainCounts).subtract,
	}).counts
}

// add puts a node's contribution in.
func (e *domainCounts) add(nc *nodeCount) {
	for i, v := range nc.values {
		if nc.in[i] {
			e.counts[i][v] += nc.n[i]
			e.nodesIn[i][v]++
		}
	}
}

// subtract takes a node's contribution out.
func (e *domainCounts) subtract(nc *nodeCount) {
	for i, v := range nc.values {
		if !nc.in[i] {
			continue
		}
		e.counts[i][v] -= nc.n[i]
		if e.nodesIn[i][v]--; e.nodesIn[i][v] == 0 {
			delete(e.nodesIn[i], v)
			delete(e.counts[i], v)
		}
	}
}
