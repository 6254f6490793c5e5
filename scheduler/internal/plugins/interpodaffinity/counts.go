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
	nodecounts.Cache[*totals, counts]
}

// totals are the counts summed over the nodes, with how many domains of
// each topology key have a count, so that a check over a node's labels
// can look at the few keys counted instead of at every label.
type totals struct {
	c    counts
	keys map[string]int
}

// topologyKeys lists the keys with a count.
func (t *totals) topologyKeys() []string {
	out := make([]string, 0, len(t.keys))
	for k := range t.keys {
		out = append(out, k)
	}
	return out
}

// get returns key's counts over nodes, where count gives one node's
// share. What it returns is only read, and only until the next call.
func (cc *countCache) get(key string, nodes []fwk.NodeInfo, count func(fwk.NodeInfo) counts) *totals {
	return cc.Get(key, nodes, nodecounts.Sum[*totals, counts]{
		Empty:    func() *totals { return &totals{c: counts{}, keys: map[string]int{}} },
		Count:    func(ni fwk.NodeInfo, _ counts) counts { return count(ni) },
		Add:      func(t *totals, c counts) { t.merge(c, 1) },
		Subtract: func(t *totals, c counts) { t.merge(c, -1) },
	})
}

// merge adds sign times o to t, dropping zeros.
func (t *totals) merge(o counts, sign int64) {
	for k, v := range o {
		before := t.c[k]
		after := before + sign*v
		switch {
		case after == 0:
			delete(t.c, k)
		default:
			t.c[k] = after
		}
		switch {
		case before == 0 && after != 0:
			t.keys[k.key]++
		case before != 0 && after == 0:
			if t.keys[k.key]--; t.keys[k.key] == 0 {
				delete(t.keys, k.key)
			}
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
	// keys are the topology keys any count may be under.
	keys []string
}

// layeredOn returns a layered count with t as its base.
func layeredOn(t *totals) *layered {
	return &layered{base: t.c, keys: t.topologyKeys()}
}

func (l *layered) get(k pair) int64 { return l.base[k] + l.delta[k] }

func (l *layered) add(terms []fwk.AffinityTerm, node nodeLabels, d int64) {
	if l.delta == nil {
		l.delta = counts{}
	}
	for _, t := range terms {
		if v, ok := node[t.TopologyKey]; ok {
			l.delta[pair{t.TopologyKey, v}] += d
			if !slices.Contains(l.keys, t.TopologyKey) {
				l.keys = append(l.keys, t.TopologyKey)
			}
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
	return &layered{base: l.base, delta: l.delta.clone(), keys: slices.Clone(l.keys)}
}

// nodeLabels are a node's labels.
type nodeLabels = map[string]string
