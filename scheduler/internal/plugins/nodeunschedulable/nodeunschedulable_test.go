package nodeunschedulable

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugintest"
)

func TestFilter(t *testing.T) {
	cordoned := plugintest.Node("cordoned", "1")
	cordoned.Spec.Unschedulable = true
	h := plugintest.New(t, framework.Registry{Name: New}, []string{Name}, nil, []*v1.Node{cordoned, plugintest.Node("open", "1")}, nil)
	for _, tt := range []struct {
		name        string
		tolerations []v1.Toleration
		fits        bool
	}{
		{name: "cordoned node refuses", fits: false},
		{name: "toleration of the unschedulable taint", tolerations: []v1.Toleration{{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}, fits: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := plugintest.Pod("p", "", "")
			p.Spec.Tolerations = tt.tolerations
			got, _ := h.Filter(t, p)
			if !got["open"].IsSuccess() {
				t.Errorf("open node: %v", got["open"])
			}
			if got["cordoned"].IsSuccess() != tt.fits || (!tt.fits && got["cordoned"].Message() != ErrReasonUnschedulable) {
				t.Errorf("cordoned node: %v, want fits=%v", got["cordoned"], tt.fits)
			}
		})
	}
}

func TestQueueingHint(t *testing.T) {
	pod := plugintest.Pod("p", "", "")
	cordoned := plugintest.Node("n", "4")
	cordoned.Spec.Unschedulable = true
	open := plugintest.Node("n", "4")
	plugintest.CheckNodeHints(t, isSchedulableAfterNodeChange, pod, []plugintest.NodeChange{
		{Name: "schedulable node added", New: open, Want: fwk.Queue},
		{Name: "cordoned node added", New: cordoned, Want: fwk.QueueSkip},
		{Name: "uncordoned", Old: cordoned, New: open, Want: fwk.Queue},
		{Name: "unchanged", Old: open, New: open, Want: fwk.QueueSkip},
	})
}
