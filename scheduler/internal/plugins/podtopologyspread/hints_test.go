package podtopologyspread

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/plugintest"
)

func TestPodQueueingHint(t *testing.T) {
	p := &Plugin{}
	waiting := spread(plugintest.Pod("w", "", "", "app", "web"), "zone", 1, v1.DoNotSchedule)
	soft := spread(plugintest.Pod("s", "", "", "app", "web"), "zone", 1, v1.ScheduleAnyway)
	web := plugintest.Pod("e", "", "n", "app", "web")
	db := plugintest.Pod("e", "", "n", "app", "db")
	otherNS := plugintest.Pod("e", "", "n", "app", "web")
	otherNS.Namespace = "other"
	tests := []struct {
		name     string
		pod      *v1.Pod
		old, new *v1.Pod
		want     fwk.QueueingHint
	}{
		{name: "matching pod added", pod: waiting, new: web, want: fwk.Queue},
		{name: "matching pod deleted", pod: waiting, old: web, want: fwk.Queue},
		{name: "other pod added", pod: waiting, new: db, want: fwk.QueueSkip},
		{name: "matching pod in another namespace", pod: waiting, new: otherNS, want: fwk.QueueSkip},
		{name: "labels now match", pod: waiting, old: db, new: web, want: fwk.Queue},
		{name: "labels no longer match", pod: waiting, old: web, new: db, want: fwk.Queue},
		{name: "labels unchanged", pod: waiting, old: web, new: web, want: fwk.QueueSkip},
		{name: "only ScheduleAnyway constraints", pod: soft, new: web, want: fwk.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var oldObj, newObj any
			if tt.old != nil {
				oldObj = tt.old
			}
			if tt.new != nil {
				newObj = tt.new
			}
			got, err := p.isSchedulableAfterPodChange(klog.Background(), tt.pod, oldObj, newObj)
			if err != nil || got != tt.want {
				t.Errorf("hint = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestNodeQueueingHint(t *testing.T) {
	p := &Plugin{}
	waiting := spread(plugintest.Pod("w", "", "", "app", "web"), "zone", 1, v1.DoNotSchedule)
	plugintest.CheckNodeHints(t, hint(p), waiting, []plugintest.NodeChange{
		{Name: "node with the key added", New: plugintest.Node("n", "4", "zone", "a"), Want: fwk.Queue},
		{Name: "node without the key added", New: plugintest.Node("n", "4"), Want: fwk.QueueSkip},
		{Name: "key added to a node", Old: plugintest.Node("n", "4"), New: plugintest.Node("n", "4", "zone", "a"), Want: fwk.Queue},
		{Name: "zone changed", Old: plugintest.Node("n", "4", "zone", "a"), New: plugintest.Node("n", "4", "zone", "b"), Want: fwk.Queue},
		{Name: "other label on a node without the key", Old: plugintest.Node("n", "4"), New: plugintest.Node("n", "4", "rack", "1"), Want: fwk.QueueSkip},
	})
	plugintest.CheckNodeHints(t, hint(p), plugintest.Pod("plain", "", ""), []plugintest.NodeChange{
		{Name: "pod without constraints", New: plugintest.Node("n", "4", "zone", "a"), Want: fwk.QueueSkip},
	})
	// A deleted node comes as the old object alone.
	if got, err := p.isSchedulableAfterNodeChange(klog.Background(), waiting, plugintest.Node("n", "4", "zone", "a"), nil); err != nil || got != fwk.Queue {
		t.Errorf("node with the key deleted: hint = %v, %v; want Queue", got, err)
	}
}

func hint(p *Plugin) fwk.QueueingHintFn { return p.isSchedulableAfterNodeChange }
