package interpodaffinity

import (
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	fwk "k8s.io/kube-scheduler/framework"
)

// maxCachedCounts bounds how many keys keep their counts between cycles.
const maxCachedCounts = 128

// countCache keeps, between scheduling cycles, per-domain counts that
// depend only on a key (the incoming pod's terms, or its namespace and
// labels) and on the nodes, so that a cycle recounts only the nodes whose
// NodeInfo changed since the last cycle that asked for the same key —
// one node per cycle in a steady stream of similar pods — instead of every
// pod on every node.
type countCache struct {
	mu      sync.Mutex
	entries map[string]*cachedCounts
	cycle   uint64
}

type cachedCounts struct {
	total counts
	nodes map[string]*contribution
	byPos []*contribution // by position in the last node list
	used  uint64
}

// contribution is what one node added to total, as of one NodeInfo.
type contribution struct {
	ni   fwk.NodeInfo
	gen  int64
	seen uint64
	c    counts
}

// get returns key's counts over nodes, where count gives one node's
// share. The map returned is only read, and only until the next call.
func (cc *countCache) get(key string, nodes []fwk.NodeInfo, count func(fwk.NodeInfo) counts) counts {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.entries == nil {
		cc.entries = map[string]*cachedCounts{}
	}
	cc.cycle++
	e := cc.entries[key]
	if e == nil {
		if len(cc.entries) >= maxCachedCounts {
			cc.evict()
		}
		e = &cachedCounts{total: counts{}, nodes: map[string]*contribution{}}
		cc.entries[key] = e
	}
	e.used = cc.cycle
	seen := 0
	if len(e.byPos) < len(nodes) {
		e.byPos = append(e.byPos, make([]*contribution, len(nodes)-len(e.byPos))...)
	}
	for pos, ni := range nodes {
		// Unchanged nodes keep their NodeInfo and mostly their place in
		// the list: found there, they need no name lookup.
		if nc := e.byPos[pos]; nc != nil && nc.ni == ni && nc.gen == ni.GetGeneration() {
			nc.seen = cc.cycle
			seen++
			continue
		}
		name := ni.Node().Name
		nc := e.nodes[name]
		if nc == nil {
			nc = &contribution{}
			e.nodes[name] = nc
		} else if nc.ni == ni && nc.gen == ni.GetGeneration() {
			nc.seen = cc.cycle
			e.byPos[pos] = nc
			seen++
			continue
		}
		e.total.merge(nc.c, -1)
		nc.ni, nc.gen, nc.seen, nc.c = ni, ni.GetGeneration(), cc.cycle, count(ni)
		e.total.merge(nc.c, 1)
		e.byPos[pos] = nc
		seen++
	}
	if seen != len(e.nodes) {
		for name, nc := range e.nodes {
			if nc.seen != cc.cycle {
				e.total.merge(nc.c, -1)
				delete(e.nodes, name)
			}
		}
	}
	return e.total
}

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

// merge adds sign times o to c, dropping zeros.
func (c counts) merge(o counts, sign int64) {
	for k, v := range o {
		c[k] += sign * v
		if c[k] == 0 {
			delete(c, k)
		}
	}
}

// termsKey identifies terms for the cache: what Matches reads.
func termsKey(kind string, terms []fwk.AffinityTerm) string {
	var b strings.Builder
	b.WriteString(kind)
	for _, t := range terms {
		b.WriteByte(0)
		b.WriteString(t.TopologyKey)
		b.WriteByte(1)
		writeSelector(&b, t.Selector)
		b.WriteByte(1)
		ns := t.Namespaces.UnsortedList()
		slices.Sort(ns)
		b.WriteString(strings.Join(ns, ","))
		b.WriteByte(1)
		writeSelector(&b, t.NamespaceSelector)
	}
	return b.String()
}

// writeSelector writes sel so that "everything" and "nothing", which both
// print as "", differ.
func writeSelector(b *strings.Builder, sel labels.Selector) {
	switch {
	case sel == nil:
		b.WriteString("nil")
	default:
		b.WriteString(strconv.FormatBool(sel.Empty()))
		b.WriteByte(2)
		b.WriteString(sel.String())
	}
}

// layered is a cached base, read only, plus this cycle's own changes.
type layered struct {
	base  counts
	delta counts
}

func (l *layered) get(k pair) int64 { return l.base[k] + l.delta[k] }

func (l *layered) add(terms []fwk.AffinityTerm, node nodeLabels, d int64) {
	if l.delta == nil {
		l.delta = counts{}
	}
	for _, t := range terms {
		if v, ok := node[t.TopologyKey]; ok {
			l.delta[pair{t.TopologyKey, v}] += d
		}
	}
}

// empty reports whether every count is zero.
func (l *layered) empty() bool {
	if len(l.delta) == 0 {
		return len(l.base) == 0
	}
	for k := range l.base {
		if l.get(k) != 0 {
			return false
		}
	}
	for k := range l.delta {
		if l.get(k) != 0 {
			return false
		}
	}
	return true
}

func (l *layered) clone() *layered {
	return &layered{base: l.base, delta: l.delta.clone()}
}

// nodeLabels are a node's labels.
type nodeLabels = map[string]string
