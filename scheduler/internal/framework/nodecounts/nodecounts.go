// Package nodecounts keeps sums over a cluster's nodes between scheduling
// cycles, so that a cycle recounts only the nodes whose NodeInfo changed
// since the last cycle that asked for the same sum.
package nodecounts

import (
	"sync"

	fwk "k8s.io/kube-scheduler/framework"
)

// DefaultMax is how many keys a Cache with no Max keeps.
const DefaultMax = 128

// Cache keeps, per key, totals of type T summed from each node's
// contribution of type C. A key names everything the sum depends on
// besides the nodes (a pod's terms, its namespace and labels); the nodes
// are given to each Get. The zero Cache is ready to use and safe for
// concurrent use.
type Cache[T, C any] struct {
	// Max bounds how many keys keep their totals; when a new key would
	// pass it, the least recently asked for goes. Zero means DefaultMax.
	Max int

	mu      sync.Mutex
	entries map[string]*entry[T, C]
	cycle   uint64 // counts Gets: when each entry and node was last used
}

// Sum says how one key's totals are made of the nodes' contributions.
type Sum[T, C any] struct {
	// Empty returns the totals of no nodes, for a key met for the first
	// time (or again after eviction).
	Empty func() T
	// Count returns a node's contribution. prev is what the node
	// contributed before, already subtracted from the totals, or the zero
	// C for a node the key has not counted; Count may reuse its storage.
	Count func(ni fwk.NodeInfo, prev C) C
	// Add puts c into t.
	Add func(t T, c C)
	// Subtract takes c, added before, out of t.
	Subtract func(t T, c C)
}

type entry[T, C any] struct {
	total T
	nodes map[string]*contribution[C]
	byPos []*contribution[C] // by position in the last node list
	used  uint64
}

// contribution is what one node added to the totals, as of one NodeInfo.
type contribution[C any] struct {
	ni   fwk.NodeInfo
	gen  int64
	seen uint64
	c    C
}

// Get returns key's totals over nodes, made with s: counted afresh for a
// new key, else updated from the previous Get by subtracting what changed
// and removed nodes contributed and adding what changed and new nodes
// contribute. A node is unchanged while both its NodeInfo and that
// NodeInfo's generation are. The totals returned must only be read, and
// only until the next Get.
func (cc *Cache[T, C]) Get(key string, nodes []fwk.NodeInfo, s Sum[T, C]) T {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.entries == nil {
		cc.entries = map[string]*entry[T, C]{}
	}
	cc.cycle++
	e := cc.entries[key]
	if e == nil {
		limit := cc.Max
		if limit <= 0 {
			limit = DefaultMax
		}
		if len(cc.entries) >= limit {
			cc.evict()
		}
		e = &entry[T, C]{total: s.Empty(), nodes: map[string]*contribution[C]{}}
		cc.entries[key] = e
	}
	e.used = cc.cycle
	seen := 0
	if len(e.byPos) < len(nodes) {
		e.byPos = append(e.byPos, make([]*contribution[C], len(nodes)-len(e.byPos))...)
	}
	for pos, ni := range nodes {
		// The snapshot keeps unchanged nodes' NodeInfos and mostly their
		// order: most nodes are found where they were, with no name lookup.
		if nc := e.byPos[pos]; nc != nil && nc.ni == ni && nc.gen == ni.GetGeneration() {
			nc.seen = cc.cycle
			seen++
			continue
		}
		name := ni.Node().Name
		nc := e.nodes[name]
		switch {
		case nc == nil:
			nc = &contribution[C]{}
			e.nodes[name] = nc
		case nc.ni == ni && nc.gen == ni.GetGeneration():
			nc.seen = cc.cycle
			e.byPos[pos] = nc
			seen++
			continue
		default:
			s.Subtract(e.total, nc.c)
		}
		nc.ni, nc.gen, nc.seen = ni, ni.GetGeneration(), cc.cycle
		nc.c = s.Count(ni, nc.c)
		s.Add(e.total, nc.c)
		e.byPos[pos] = nc
		seen++
	}
	if seen != len(e.nodes) {
		for name, nc := range e.nodes {
			if nc.seen != cc.cycle {
				s.Subtract(e.total, nc.c)
				delete(e.nodes, name)
			}
		}
	}
	return e.total
}

// evict drops the least recently used entry.
func (cc *Cache[T, C]) evict() {
	var oldest string
	var at uint64
	found := false
	for k, e := range cc.entries {
		if !found || e.used < at {
			oldest, at, found = k, e.used, true
		}
	}
	delete(cc.entries, oldest)
}
