package interpodaffinity

import (
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/framework/nodecounts"
)

// countCache keeps, between scheduling cycles, per-domain counts that
// depend only on a key (the incoming pod's terms, or its namespace and
// labels) and on the nodes, so that a cycle recounts only the nodes whose
// NodeInfo changed since the last cycle that asked for the same key —
// one node per cycle in a steady stream of similar pods — instead of every
// pod on every node.
type countCache struct {
	nodecounts.Cache[counts, counts]
}

// get returns key's counts over nodes, where count gives one node's
// share. The map returned is only read, and only until the next call.
func (cc *countCache) get(key string, nodes []fwk.NodeInfo, count func(fwk.NodeInfo) counts) counts {
	return cc.Get(key, nodes, nodecounts.Sum[counts, counts]{
		Empty:    func() counts { return counts{} },
		Count:    func(ni fwk.NodeInfo, _ counts) counts { return count(ni) },
		Add:      func(total, c counts) { total.merge(c, 1) },
		Subtract: func(total, c counts) { total.merge(c, -1) },
	})
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
