package nodeunschedulable

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
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
	tests := []struct {
		name     string
		old, new *v1.Node
		want     fwk.QueueingHint
	}{
		{name: "schedulable node added", new: open, want: fwk.Queue},
		{name: "cordoned node added", new: cordoned, want: fwk.QueueSkip},
		{name: "uncordoned", old: cordoned, new: open, want: fwk.Queue},
		{name: "unchanged", old: open, new: open, want: fwk.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var old any
			if tt.old != nil {
				old = tt.old
			}
			got, err := isSchedulableAfterNodeChange(klog.Background(), pod, old, tt.new)
			if err != nil || got != tt.want {
				t.Errorf("hint = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
