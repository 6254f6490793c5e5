package podtopologyspread

import (
	"context"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	fwk "k8s.io/kube-scheduler/framework"
)

// maxCachedCounts bounds how many (namespace, constraints) keys keep
// their domain counts between cycles.
const maxCachedCounts = 128

// countCache keeps, between scheduling cycles, the matching pods per
// topology domain for the constraint sets pods recently asked about, so
// that a cycle recounts only the nodes whose NodeInfo changed since (one
// node per cycle in a steady stream of pods) rather than every pod on
// every node. It holds only counts that do not depend on the incoming
// pod's own node affinity or tolerations (see cacheable).
type countCache struct {
	mu      sync.Mutex
	entries map[string]*domainCounts
	cycle   uint64
}

// domainCounts are one key's counts.
type domainCounts struct {
	// counts and nodesIn are, per constraint, the matching pods and the
	// qualifying nodes per domain.
	counts  []map[string]int
	nodesIn []map[string]int
	nodes   map[string]*nodeCount
	byPos   []*nodeCount // by position in the last node list
	used    uint64
}

// nodeCount is what one node contributed, as of one NodeInfo.
type nodeCount struct {
	ni     fwk.NodeInfo
	gen    int64
	seen   uint64
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
	key := cacheKey(pod.Namespace, cs)
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.entries == nil {
		cc.entries = map[string]*domainCounts{}
	}
	cc.cycle++
	e := cc.entries[key]
	if e == nil {
		if len(cc.entries) >= maxCachedCounts {
			cc.evict()
		}
		e = &domainCounts{counts: make([]map[string]int, len(cs)), nodesIn: make([]map[string]int, len(cs)), nodes: map[string]*nodeCount{}}
		for i := range cs {
			e.counts[i] = map[string]int{}
			e.nodesIn[i] = map[string]int{}
		}
		cc.entries[key] = e
	}
	e.used = cc.cycle
	seen := 0
	if len(e.byPos) < len(all) {
		e.byPos = append(e.byPos, make([]*nodeCount, len(all)-len(e.byPos))...)
	}
	for pos, ni := range all {
		// The snapshot keeps unchanged nodes' NodeInfos and their order:
		// most nodes are found where they were, with no name lookup.
		if nc := e.byPos[pos]; nc != nil && nc.ni == ni && nc.gen == ni.GetGeneration() {
			nc.seen = cc.cycle
			seen++
			continue
		}
		node := ni.Node()
		nc := e.nodes[node.Name]
		e.byPos[pos] = nil
		if nc == nil {
			nc = &nodeCount{in: make([]bool, len(cs)), values: make([]string, len(cs)), n: make([]int, len(cs))}
			e.nodes[node.Name] = nc
		} else if nc.ni == ni && nc.gen == ni.GetGeneration() {
			nc.seen = cc.cycle
			e.byPos[pos] = nc
			seen++
			continue
		} else {
			e.subtract(nc)
		}
		nc.ni, nc.gen, nc.seen = ni, ni.GetGeneration(), cc.cycle
		e.byPos[pos] = nc
		seen++
		for i, c := range cs {
			nc.in[i], nc.values[i], nc.n[i] = false, "", 0
			if !nodeQualifies(ctx, node, cs, c, required, nil) {
				continue
			}
			nc.in[i] = true
			nc.values[i] = node.Labels[c.key]
			nc.n[i] = countMatching(ni.GetPods(), pod.Namespace, c.selector)
			e.counts[i][nc.values[i]] += nc.n[i]
			e.nodesIn[i][nc.values[i]]++
		}
	}
	if seen != len(e.nodes) {
		for name, nc := range e.nodes {
			if nc.seen != cc.cycle {
				e.subtract(nc)
				delete(e.nodes, name)
			}
		}
	}
	return e.counts
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

// evict drops the least recently used entry.
func (cc *countCache) evict() {
	var oldest string
	var at uint64
	for k, e := range cc.entries {
		if oldest == "" || e.used < at {
			oldest, at = k, e.used
		}
	}
	delete(cc.entries, oldest)
}
