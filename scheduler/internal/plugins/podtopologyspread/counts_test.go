package podtopologyspread

import (
	"context"
	"maps"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/plugintest"
)

// TestCountCacheFollowsChanges checks that counts kept between cycles
// equal a fresh count after pods and nodes come and go.
func TestCountCacheFollowsChanges(t *testing.T) {
	ctx := context.Background()
	c := plugintest.NewLive(plugintest.Node("a1", "4", "zone", "a"), plugintest.Node("a2", "4", "zone", "a"),
		plugintest.Node("b1", "4", "zone", "b"), plugintest.Node("nozone", "4"))
	c.AddPod(plugintest.Pod("w1", "", "a1", "app", "web"))
	incoming := spread(plugintest.Pod("p", "", "", "app", "web"), "zone", 1, v1.DoNotSchedule)
	p := &Plugin{}
	cs, err := p.constraints(incoming, v1.DoNotSchedule)
	if err != nil {
		t.Fatal(err)
	}
	required := nodeaffinity.GetRequiredNodeAffinity(incoming)
	var cc countCache
	steps := []struct {
		name   string
		change func()
		want   map[string]int
	}{
		{name: "first count", change: func() {}, want: map[string]int{"a": 1, "b": 0}},
		{name: "pod added in b", change: func() { c.AddPod(plugintest.Pod("w2", "", "b1", "app", "web")) }, want: map[string]int{"a": 1, "b": 1}},
		{name: "other app ignored", change: func() { c.AddPod(plugintest.Pod("d1", "", "b1", "app", "db")) }, want: map[string]int{"a": 1, "b": 1}},
		{name: "pod removed from a", change: func() { c.RemovePod(plugintest.Pod("w1", "", "a1", "app", "web")) }, want: map[string]int{"a": 0, "b": 1}},
		{name: "zone b loses its node", change: func() {
			c.RemovePod(plugintest.Pod("w2", "", "b1", "app", "web"))
			c.RemovePod(plugintest.Pod("d1", "", "b1", "app", "db"))
			c.RemoveNode(plugintest.Node("b1", "4", "zone", "b"))
		}, want: map[string]int{"a": 0}},
		{name: "node relabelled into a new zone", change: func() {
			c.AddPod(plugintest.Pod("w3", "", "a2", "app", "web"))
			c.UpdateNode(nil, plugintest.Node("a2", "4", "zone", "c"))
		}, want: map[string]int{"a": 0, "c": 1}},
	}
	for _, st := range steps {
		st.change()
		all := c.List()
		got := cc.counts(ctx, incoming, cs, required, all)[0]
		if !maps.Equal(got, st.want) {
			t.Errorf("%s: counts %v, want %v", st.name, got, st.want)
		}
		if fresh := freshCounts(ctx, cs, required, incoming, all); !maps.Equal(got, fresh) {
			t.Errorf("%s: cached %v, fresh count %v", st.name, got, fresh)
		}
	}
}

func freshCounts(ctx context.Context, cs []constraint, required nodeaffinity.RequiredNodeAffinity, pod *v1.Pod, all []fwk.NodeInfo) map[string]int {
	out := map[string]int{}
	for _, ni := range all {
		if nodeQualifies(ctx, ni.Node(), cs, cs[0], required, nil) {
			out[ni.Node().Labels[cs[0].key]] += countMatching(ni.GetPods(), pod.Namespace, cs[0].selector)
		}
	}
	return out
}

func TestCacheable(t *testing.T) {
	honor := v1.NodeInclusionPolicyHonor
	tests := []struct {
		name string
		pod  func() *v1.Pod
		want bool
	}{
		{name: "plain", pod: func() *v1.Pod { return spread(plugintest.Pod("p", "", ""), "zone", 1, v1.DoNotSchedule) }, want: true},
		{name: "nodeSelector with affinity honoured", pod: func() *v1.Pod {
			p := spread(plugintest.Pod("p", "", ""), "zone", 1, v1.DoNotSchedule)
			p.Spec.NodeSelector = map[string]string{"disk": "ssd"}
			return p
		}, want: false},
		{name: "taints honoured", pod: func() *v1.Pod {
			p := spread(plugintest.Pod("p", "", ""), "zone", 1, v1.DoNotSchedule)
			p.Spec.TopologySpreadConstraints[0].NodeTaintsPolicy = &honor
			return p
		}, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := tt.pod()
			cs, err := (&Plugin{}).constraints(pod, v1.DoNotSchedule)
			if err != nil {
				t.Fatal(err)
			}
			if got := cacheable(pod, cs); got != tt.want {
				t.Errorf("cacheable = %v, want %v", got, tt.want)
			}
		})
	}
}
