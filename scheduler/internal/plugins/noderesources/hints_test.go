package noderesources

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/plugintest"
)

func TestNodeQueueingHint(t *testing.T) {
	waiting := plugintest.Pod("w", "2", "")
	noPods := plugintest.Node("n", "8")
	noPods.Status.Allocatable[v1.ResourcePods] = resource.MustParse("0")
	plugintest.CheckNodeHints(t, isSchedulableAfterNodeChange, waiting, []plugintest.NodeChange{
		{Name: "added node large enough", New: plugintest.Node("n", "4"), Want: fwk.Queue},
		{Name: "added node too small", New: plugintest.Node("n", "1"), Want: fwk.QueueSkip},
		{Name: "added node taking no pods", New: noPods, Want: fwk.QueueSkip},
		{Name: "cpu grew", Old: plugintest.Node("n", "2"), New: plugintest.Node("n", "4"), Want: fwk.Queue},
		{Name: "cpu grew, still too small", Old: plugintest.Node("n", "1"), New: plugintest.Node("n", "1500m"), Want: fwk.QueueSkip},
		{Name: "cpu shrank", Old: plugintest.Node("n", "8"), New: plugintest.Node("n", "4"), Want: fwk.QueueSkip},
		{Name: "nothing the pod asks for grew", Old: plugintest.Node("n", "4"), New: plugintest.Node("n", "4"), Want: fwk.QueueSkip},
	})
}

func TestPodQueueingHint(t *testing.T) {
	waiting := plugintest.Pod("w", "2", "")
	withMemory := func(p *v1.Pod, m string) *v1.Pod {
		p.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse(m)
		return p
	}
	tests := []struct {
		name     string
		old, new *v1.Pod
		want     fwk.QueueingHint
	}{
		{name: "assigned pod deleted", old: plugintest.Pod("d", "1", "n"), want: fwk.Queue},
		{name: "assigned pod without requests deleted frees a pod slot", old: plugintest.Pod("d", "", "n"), want: fwk.Queue},
		{name: "unassigned pod deleted", old: plugintest.Pod("d", "1", ""), want: fwk.QueueSkip},
		{name: "cpu scaled down", old: plugintest.Pod("d", "2", "n"), new: plugintest.Pod("d", "1", "n"), want: fwk.Queue},
		{name: "memory scaled down, pod wants none", old: withMemory(plugintest.Pod("d", "1", "n"), "2Gi"), new: withMemory(plugintest.Pod("d", "1", "n"), "1Gi"), want: fwk.QueueSkip},
		{name: "cpu scaled up", old: plugintest.Pod("d", "1", "n"), new: plugintest.Pod("d", "2", "n"), want: fwk.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var newObj any
			if tt.new != nil {
				newObj = tt.new
			}
			got, err := isSchedulableAfterPodChange(klog.Background(), waiting, tt.old, newObj)
			if err != nil || got != tt.want {
				t.Errorf("hint = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
