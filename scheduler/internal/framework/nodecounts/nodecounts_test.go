package nodecounts

import (
	"maps"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/framework"
)

// cluster is a list of nodes as a snapshot gives it: a NodeInfo per node,
// replaced by a copy with a new generation when the node changes.
type cluster []*framework.NodeInfo

func newCluster(pods map[string]int) cluster {
	var c cluster
	for _, name := range slices.Sorted(maps.Keys(pods)) {
		c = c.withNode(name, pods[name])
	}
	return c
}

// withNode returns c with a node name running pods pods.
func (c cluster) withNode(name string, pods int) cluster {
	ni := framework.NewNodeInfo()
	ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
	for i := range pods {
		ni.AddPodInfo(framework.NewPodInfo(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + string(rune('a'+i)), Namespace: "default"}}))
	}
	return append(slices.Clone(c), ni)
}

// withPod returns c with a pod added to node name, as a copy.
func (c cluster) withPod(name string) cluster {
	out := slices.Clone(c)
	for i, ni := range out {
		if ni.Node().Name == name {
			cl := ni.Clone()
			cl.AddPodInfo(framework.NewPodInfo(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-new", Namespace: "default"}}))
			out[i] = cl
		}
	}
	return out
}

// without returns c without node name.
func (c cluster) without(name string) cluster {
	return slices.DeleteFunc(slices.Clone(c), func(ni *framework.NodeInfo) bool { return ni.Node().Name == name })
}

func (c cluster) list() []fwk.NodeInfo {
	out := make([]fwk.NodeInfo, len(c))
	for i, ni := range c {
		out[i] = ni
	}
	return out
}

// podsPerNode sums the pods of all nodes, by node name, and records which
// nodes it counted.
type podsPerNode struct {
	counted []string
}

func (p *podsPerNode) sum() Sum[map[string]int, int] {
	return Sum[map[string]int, int]{
		Empty: func() map[string]int { return map[string]int{} },
		Count: func(ni fwk.NodeInfo, _ int) int {
			p.counted = append(p.counted, ni.Node().Name)
			return len(ni.GetPods())
		},
		Add: func(t map[string]int, c int) { t["pods"] += c; t["nodes"]++ },
		Subtract: func(t map[string]int, c int) {
			t["pods"] -= c
			if t["nodes"]--; t["nodes"] == 0 {
				delete(t, "nodes")
				delete(t, "pods")
			}
		},
	}
}

func TestGet(t *testing.T) {
	three := map[string]int{"pods": 3, "nodes": 3}
	tests := []struct {
		name string
		// Key "k" is first asked for over nodes a, b and c (unless
		// fresh), then key "other" (if other), then "k" over change's
		// result.
		fresh       bool
		other       bool
		max         int
		change      func(cluster) cluster
		want        map[string]int
		wantCounted []string
	}{
		{name: "first fill", fresh: true, want: three, wantCounted: []string{"a", "b", "c"}},
		{name: "unchanged nodes skipped", want: three},
		{name: "unchanged nodes found by name after a move", change: func(c cluster) cluster { return cluster{c[2], c[0], c[1]} }, want: three},
		{name: "changed generation recomputed", change: func(c cluster) cluster {
			c[1].AddPodInfo(framework.NewPodInfo(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b-new", Namespace: "default"}}))
			return c
		}, want: map[string]int{"pods": 4, "nodes": 3}, wantCounted: []string{"b"}},
		{name: "changed copy recomputed", change: func(c cluster) cluster { return c.withPod("b") }, want: map[string]int{"pods": 4, "nodes": 3}, wantCounted: []string{"b"}},
		{name: "removed node subtracted", change: func(c cluster) cluster { return c.without("b") }, want: map[string]int{"pods": 1, "nodes": 2}},
		{name: "all nodes removed", change: func(cluster) cluster { return nil }, want: map[string]int{}},
		{name: "new node added", change: func(c cluster) cluster { return c.withNode("d", 4) }, want: map[string]int{"pods": 7, "nodes": 4}, wantCounted: []string{"d"}},
		{name: "kept while under max", other: true, max: 2, want: three},
		{name: "least recently used evicted at max", other: true, max: 1, want: three, wantCounted: []string{"a", "b", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(map[string]int{"a": 1, "b": 2, "c": 0})
			cc := &Cache[map[string]int, int]{Max: tt.max}
			if !tt.fresh {
				cc.Get("k", c.list(), (&podsPerNode{}).sum())
			}
			if tt.other {
				cc.Get("other", c.list(), (&podsPerNode{}).sum())
			}
			if tt.change != nil {
				c = tt.change(c)
			}
			p := &podsPerNode{}
			got := cc.Get("k", c.list(), p.sum())
			if !maps.Equal(got, tt.want) {
				t.Errorf("totals %v, want %v", got, tt.want)
			}
			if !slices.Equal(p.counted, tt.wantCounted) {
				t.Errorf("counted %v, want %v", p.counted, tt.wantCounted)
			}
		})
	}
}

// TestCountReusesPrevious checks that Count gets what the node gave
// before, so that it can reuse its storage.
func TestCountReusesPrevious(t *testing.T) {
	c := newCluster(map[string]int{"a": 1})
	var prevs []int
	s := Sum[map[string]int, int]{
		Empty:    func() map[string]int { return map[string]int{} },
		Count:    func(ni fwk.NodeInfo, prev int) int { prevs = append(prevs, prev); return len(ni.GetPods()) },
		Add:      func(t map[string]int, c int) { t["pods"] += c },
		Subtract: func(t map[string]int, c int) { t["pods"] -= c },
	}
	var cc Cache[map[string]int, int]
	cc.Get("k", c.list(), s)
	cc.Get("k", c.withPod("a").list(), s)
	if want := []int{0, 1}; !slices.Equal(prevs, want) {
		t.Errorf("Count's prev %v, want %v", prevs, want)
	}
}
