package nodeaffinity

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugintest"
)

func required(terms ...v1.NodeSelectorTerm) *v1.Affinity {
	return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}}
}

func TestFilter(t *testing.T) {
	nodes := []*v1.Node{plugintest.Node("a", "4", "zone", "a", "disk", "ssd"), plugintest.Node("b", "4", "zone", "b")}
	tests := []struct {
		name     string
		selector map[string]string
		affinity *v1.Affinity
		want     map[string]bool
	}{
		{name: "no constraint", want: map[string]bool{"a": true, "b": true}},
		{name: "nodeSelector", selector: map[string]string{"disk": "ssd"}, want: map[string]bool{"a": true, "b": false}},
		{name: "required In", affinity: required(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"b"}}}}), want: map[string]bool{"a": false, "b": true}},
		{name: "terms are ORed", affinity: required(
			v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"a"}}}},
			v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"b"}}}},
		), want: map[string]bool{"a": true, "b": true}},
		{name: "DoesNotExist", affinity: required(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "disk", Operator: v1.NodeSelectorOpDoesNotExist}}}), want: map[string]bool{"a": false, "b": true}},
		{name: "matchFields metadata.name narrows in PreFilter", affinity: required(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"b"}}}}), want: map[string]bool{"a": false, "b": true}},
		{name: "selector and affinity both apply", selector: map[string]string{"disk": "ssd"}, affinity: required(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"b"}}}}), want: map[string]bool{"a": false, "b": false}},
	}
	h := plugintest.New(t, framework.Registry{Name: New}, []string{Name}, nil, nodes, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plugintest.Pod("p", "100m", "")
			p.Spec.NodeSelector = tt.selector
			p.Spec.Affinity = tt.affinity
			got, pre := h.Filter(t, p)
			if pre != nil {
				t.Fatalf("PreFilter: %v", pre)
			}
			for node, fits := range tt.want {
				if got[node].IsSuccess() != fits {
					t.Errorf("node %s: status %v, want fits=%v", node, got[node], fits)
				}
				if !fits && got[node].Message() != ErrReasonPod && got[node].Message() != "excluded by PreFilter" {
					t.Errorf("node %s: reason %q", node, got[node].Message())
				}
			}
		})
	}
}

func TestScoreAndAddedAffinity(t *testing.T) {
	nodes := []*v1.Node{plugintest.Node("a", "4", "zone", "a"), plugintest.Node("b", "4", "zone", "b")}
	h := plugintest.New(t, framework.Registry{Name: New}, []string{Name}, nil, nodes, nil)
	p := plugintest.Pod("p", "100m", "")
	p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
		{Weight: 10, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"b"}}}}},
	}}}
	if got := h.Score(t, p); got["b"] != 100 || got["a"] != 0 {
		t.Errorf("scores = %v, want b 100, a 0", got)
	}

	args := &configv1.NodeAffinityArgs{AddedAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
		{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"a"}}}},
	}}}}
	h = plugintest.New(t, framework.Registry{Name: New}, []string{Name}, map[string]runtime.Object{Name: args}, nodes, nil)
	got, _ := h.Filter(t, plugintest.Pod("q", "100m", ""))
	if !got["a"].IsSuccess() || got["b"].IsSuccess() || got["b"].Message() != "node(s) didn't match scheduler-enforced node affinity" {
		t.Errorf("addedAffinity: %v", got)
	}
}

func TestQueueingHint(t *testing.T) {
	pl := &Plugin{}
	pod := plugintest.Pod("p", "", "")
	pod.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	ssd := plugintest.Node("n", "4", "disk", "ssd")
	hdd := plugintest.Node("n", "4", "disk", "hdd")
	plugintest.CheckNodeHints(t, pl.isSchedulableAfterNodeChange, pod, []plugintest.NodeChange{
		{Name: "matching node added", New: ssd, Want: fwk.Queue},
		{Name: "other node added", New: hdd, Want: fwk.QueueSkip},
		{Name: "node relabelled to match", Old: hdd, New: ssd, Want: fwk.Queue},
		{Name: "matching node still matches", Old: ssd, New: ssd, Want: fwk.QueueSkip},
	})
}
