package tainttoleration

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugintest"
)

func TestFilter(t *testing.T) {
	tainted := plugintest.Node("tainted", "4")
	tainted.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}}
	soft := plugintest.Node("soft", "4")
	soft.Spec.Taints = []v1.Taint{{Key: "spot", Value: "true", Effect: v1.TaintEffectPreferNoSchedule}}
	tests := []struct {
		name        string
		tolerations []v1.Toleration
		wantReason  string
	}{
		{name: "untolerated NoSchedule taint", wantReason: "node(s) had untolerated taint {dedicated: gpu}"},
		{name: "tolerated by key and value", tolerations: []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "gpu", Effect: v1.TaintEffectNoSchedule}}},
		{name: "tolerated by Exists", tolerations: []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}},
		{name: "wrong value", tolerations: []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "tpu"}}, wantReason: "node(s) had untolerated taint {dedicated: gpu}"},
	}
	h := plugintest.New(t, framework.Registry{Name: New}, []string{Name}, nil, []*v1.Node{tainted, soft}, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plugintest.Pod("p", "100m", "")
			p.Spec.Tolerations = tt.tolerations
			got, _ := h.Filter(t, p)
			if !got["soft"].IsSuccess() {
				t.Errorf("PreferNoSchedule taint filtered the pod: %v", got["soft"])
			}
			st := got["tainted"]
			if tt.wantReason == "" {
				if !st.IsSuccess() {
					t.Errorf("status = %v, want success", st)
				}
				return
			}
			if st.IsSuccess() || st.Message() != tt.wantReason {
				t.Errorf("status = %v, want %q", st, tt.wantReason)
			}
		})
	}
}

func TestScorePrefersUntaintedNodes(t *testing.T) {
	soft := plugintest.Node("soft", "4")
	soft.Spec.Taints = []v1.Taint{{Key: "spot", Value: "true", Effect: v1.TaintEffectPreferNoSchedule}}
	plain := plugintest.Node("plain", "4")
	h := plugintest.New(t, framework.Registry{Name: New}, []string{Name}, nil, []*v1.Node{soft, plain}, nil)
	got := h.Score(t, plugintest.Pod("p", "100m", ""))
	if got["plain"] != 100 || got["soft"] != 0 {
		t.Errorf("scores = %v, want plain 100, soft 0", got)
	}
	tolerating := plugintest.Pod("q", "100m", "")
	tolerating.Spec.Tolerations = []v1.Toleration{{Key: "spot", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectPreferNoSchedule}}
	got = h.Score(t, tolerating)
	if got["plain"] != got["soft"] {
		t.Errorf("tolerating pod scores = %v, want equal", got)
	}
}

func TestQueueingHint(t *testing.T) {
	pod := plugintest.Pod("p", "", "")
	tainted := plugintest.Node("n", "4")
	tainted.Spec.Taints = []v1.Taint{{Key: "dedicated", Effect: v1.TaintEffectNoSchedule}}
	clean := plugintest.Node("n", "4")
	plugintest.CheckNodeHints(t, isSchedulableAfterNodeChange, pod, []plugintest.NodeChange{
		{Name: "untainted node added", New: clean, Want: fwk.Queue},
		{Name: "tainted node added", New: tainted, Want: fwk.QueueSkip},
		{Name: "taint removed", Old: tainted, New: clean, Want: fwk.Queue},
		{Name: "taint added", Old: clean, New: tainted, Want: fwk.QueueSkip},
	})
}
