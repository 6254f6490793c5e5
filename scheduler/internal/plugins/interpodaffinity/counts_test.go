package interpodaffinity

import (
	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/plugintest"
)

// TestCountCacheFollowsChanges checks that counts kept between cycles
// equal a fresh count as pods and nodes come and go.
func TestCountCacheFollowsChanges(t *testing.T) {
	c := plugintest.NewLive(plugintest.Node("a1", "4", "zone", "a"), plugintest.Node("a2", "4", "zone", "a"), plugintest.Node("b1", "4", "zone", "b"))
	term := fwk.AffinityTerm{TopologyKey: "zone", Selector: labels.SelectorFromSet(labels.Set{"app": "web"}), Namespaces: sets.New(plugintest.Pod("x", "", "").Namespace), NamespaceSelector: labels.Nothing()}
	count := func(ni fwk.NodeInfo) counts {
		out := counts{}
		for _, p := range ni.GetPods() {
			if term.Matches(p.GetPod(), nil) {
				out.add([]fwk.AffinityTerm{term}, ni.Node(), 1)
			}
		}
		return out
	}
	var cc countCache
	steps := []struct {
		name   string
		change func()
		want   counts
	}{
		{name: "empty", change: func() {}, want: counts{}},
		{name: "two in a", change: func() {
			c.AddPod(plugintest.Pod("w1", "", "a1", "app", "web"))
			c.AddPod(plugintest.Pod("w2", "", "a2", "app", "web"))
		}, want: counts{{"zone", "a"}: 2}},
		{name: "other app", change: func() { c.AddPod(plugintest.Pod("d", "", "b1", "app", "db")) }, want: counts{{"zone", "a"}: 2}},
		{name: "one leaves a, one joins b", change: func() {
			c.RemovePod(plugintest.Pod("w1", "", "a1", "app", "web"))
			c.AddPod(plugintest.Pod("w3", "", "b1", "app", "web"))
		}, want: counts{{"zone", "a"}: 1, {"zone", "b"}: 1}},
		{name: "node a2 gone with its pod", change: func() {
			c.RemovePod(plugintest.Pod("w2", "", "a2", "app", "web"))
			c.RemoveNode(plugintest.Node("a2", "4", "zone", "a"))
		}, want: counts{{"zone", "b"}: 1}},
	}
	for _, st := range steps {
		st.change()
		got := cc.get(termsKey("A", []fwk.AffinityTerm{term}), c.List(), count)
		if !maps.Equal(got.c, st.want) {
			t.Errorf("%s: counts %v, want %v", st.name, got.c, st.want)
		}
		wantKeys := map[string]int{}
		for k := range st.want {
			wantKeys[k.key]++
		}
		if !maps.Equal(got.keys, wantKeys) {
			t.Errorf("%s: domains per key %v, want %v", st.name, got.keys, wantKeys)
		}
	}
}

func TestTermsKeyTellsSelectorsApart(t *testing.T) {
	base := fwk.AffinityTerm{TopologyKey: "zone", Selector: labels.Everything(), NamespaceSelector: labels.Nothing()}
	nothing := base
	nothing.Selector = labels.Nothing()
	allNamespaces := base
	allNamespaces.NamespaceSelector = labels.Everything()
	keys := map[string]string{}
	for name, term := range map[string]fwk.AffinityTerm{"everything": base, "nothing": nothing, "all namespaces": allNamespaces} {
		k := termsKey("A", []fwk.AffinityTerm{term})
		if other, dup := keys[k]; dup {
			t.Errorf("terms %q and %q share a key", name, other)
		}
		keys[k] = name
	}
}

func TestLayered(t *testing.T) {
	l := &layered{base: counts{{"zone", "a"}: 1}}
	if l.empty() {
		t.Error("a base count is not empty")
	}
	c := l.clone()
	c.add([]fwk.AffinityTerm{{TopologyKey: "zone"}}, map[string]string{"zone": "a"}, -1)
	if !c.empty() || c.get(pair{"zone", "a"}) != 0 {
		t.Errorf("after removing the only pod: empty %v, count %d", c.empty(), c.get(pair{"zone", "a"}))
	}
	if l.get(pair{"zone", "a"}) != 1 {
		t.Error("a clone's change reached the original")
	}
}
