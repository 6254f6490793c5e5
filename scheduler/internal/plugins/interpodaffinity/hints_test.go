package interpodaffinity

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/plugintest"
)

func TestPodQueueingHint(t *testing.T) {
	p := &Plugin{}
	withAffinity := func(p *v1.Pod, a *v1.Affinity) *v1.Pod {
		p.Spec.Affinity = a
		return p
	}
	wantsDB := withAffinity(plugintest.Pod("w", "", "", "app", "web"), &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term("zone", "app", "db")}}})
	avoidsDB := withAffinity(plugintest.Pod("w", "", "", "app", "web"), &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term("zone", "app", "db")}}})
	plain := plugintest.Pod("w", "", "", "app", "web")
	db := plugintest.Pod("e", "", "n", "app", "db")
	cache := plugintest.Pod("e", "", "n", "app", "cache")
	guard := withAffinity(plugintest.Pod("g", "", "n", "app", "guard"), &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term("zone", "app", "web")}}})
	pendingDB := plugintest.Pod("e", "", "", "app", "db")
	tests := []struct {
		name     string
		pod      *v1.Pod
		old, new *v1.Pod
		want     fwk.QueueingHint
	}{
		{name: "pod matching affinity added", pod: wantsDB, new: db, want: fwk.Queue},
		{name: "other pod added", pod: wantsDB, new: cache, want: fwk.QueueSkip},
		{name: "unassigned pod", pod: wantsDB, new: pendingDB, want: fwk.QueueSkip},
		{name: "pod relabelled into affinity", pod: wantsDB, old: cache, new: db, want: fwk.Queue},
		{name: "pod relabelled out of affinity", pod: wantsDB, old: db, new: cache, want: fwk.QueueSkip},
		{name: "pod relabelled out of anti-affinity", pod: avoidsDB, old: db, new: cache, want: fwk.Queue},
		{name: "pod matching anti-affinity added", pod: avoidsDB, new: db, want: fwk.QueueSkip},
		{name: "pod matching anti-affinity deleted", pod: avoidsDB, old: db, want: fwk.Queue},
		{name: "other pod deleted", pod: avoidsDB, old: cache, want: fwk.QueueSkip},
		{name: "pod whose anti-affinity kept the pod out deleted", pod: plain, old: guard, want: fwk.Queue},
		{name: "pod without affinity deleted", pod: plain, old: db, want: fwk.QueueSkip},
		{name: "last pod of the group deleted", pod: wantsDB, old: db, want: fwk.Queue},
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
	wantsDB := plugintest.Pod("w", "", "", "app", "web")
	wantsDB.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term("zone", "app", "db")}}}
	plugintest.CheckNodeHints(t, p.isSchedulableAfterNodeChange, wantsDB, []plugintest.NodeChange{
		{Name: "node with the affinity key added", New: plugintest.Node("n", "4", "zone", "a"), Want: fwk.Queue},
		{Name: "node without the affinity key added", New: plugintest.Node("n", "4"), Want: fwk.QueueSkip},
		{Name: "affinity key added to a node", Old: plugintest.Node("n", "4"), New: plugintest.Node("n", "4", "zone", "a"), Want: fwk.Queue},
	})
	plugintest.CheckNodeHints(t, p.isSchedulableAfterNodeChange, plugintest.Pod("plain", "", ""), []plugintest.NodeChange{
		{Name: "any node may open a domain", New: plugintest.Node("n", "4"), Want: fwk.Queue},
	})
}
