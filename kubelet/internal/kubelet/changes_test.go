package kubelet

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestSyncReadsOnlyWhatItChanged: a pod's first sync lists the runtime
// once, before it acts, and reads only the statuses of what it made; a
// sync that changes nothing lists once and writes no status.
func TestSyncReadsOnlyWhatItChanged(t *testing.T) {
	pod := testPod("calls")
	f := newFixture(t, pod)
	w := newPodWorker(pod.UID)
	count := func(calls []string, name string) int {
		n := 0
		for _, c := range calls {
			if c == name {
				n++
			}
		}
		return n
	}
	tests := []struct {
		name                 string
		lists, statuses, ops int
		patches              int
	}{
		{name: "first sync", lists: 1, statuses: 1, ops: 3, patches: 1},
		{name: "resync with nothing changed", lists: 1, statuses: 1, ops: 0, patches: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.runtime.Lock()
			f.runtime.Called = nil
			f.runtime.Unlock()
			f.client.ClearActions()
			f.sync(t, w, pod)
			calls := f.runtime.GetCalls()
			if got := count(calls, "ListPodSandbox"); got != tt.lists {
				t.Errorf("ListPodSandbox called %d times, want %d: %v", got, tt.lists, calls)
			}
			if got := count(calls, "ListContainers"); got != tt.lists {
				t.Errorf("ListContainers called %d times, want %d: %v", got, tt.lists, calls)
			}
			if got := count(calls, "ContainerStatus"); got != tt.statuses {
				t.Errorf("ContainerStatus called %d times, want %d: %v", got, tt.statuses, calls)
			}
			if got := count(calls, "RunPodSandbox") + count(calls, "CreateContainer") + count(calls, "StartContainer"); got != tt.ops {
				t.Errorf("%d sandbox and container operations, want %d: %v", got, tt.ops, calls)
			}
			patches := 0
			for _, a := range f.client.Actions() {
				if a.GetVerb() == "patch" && a.GetSubresource() == "status" {
					patches++
				}
			}
			if patches != tt.patches {
				t.Errorf("%d status patches, want %d", patches, tt.patches)
			}
			st := w.written()
			if st == nil || st.Phase != corev1.PodRunning || !slices.ContainsFunc(st.Conditions, func(c corev1.PodCondition) bool {
				return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
			}) {
				t.Errorf("status after the sync is not Running and Ready: %+v", st)
			}
		})
	}
}

// TestRelistReusesSandboxList: a relist that finds the containers as they
// were reuses its last sandbox list; a container change, a change the
// kubelet made itself, or the period running out lists sandboxes again.
func TestRelistReusesSandboxList(t *testing.T) {
	pod := testPod("relist")
	f := newFixture(t, pod)
	f.syncedWorker(t, pod)
	ctx := context.Background()
	sandboxLists := func() int {
		f.runtime.Lock()
		defer f.runtime.Unlock()
		n := 0
		for _, c := range f.runtime.Called {
			if c == "ListPodSandbox" {
				n++
			}
		}
		f.runtime.Called = nil
		return n
	}
	sandboxLists() // the sync's own
	steps := []struct {
		name   string
		before func()
		want   int
	}{
		{"first relist after the kubelet's own changes", nil, 1},
		{"nothing changed", nil, 0},
		{"nothing changed again", nil, 0},
		{"a container exited", func() { f.exit(f.containers("app")[0], 1) }, 1},
		{"the period ran out", func() { f.k.relisted.listedAt = time.Now().Add(-sandboxRelistPeriod) }, 1},
		{"the kubelet changed the pod", func() { f.k.sandboxesChanged.Store(true) }, 1},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		f.k.relist(ctx)
		if got := sandboxLists(); got != s.want {
			t.Errorf("%s: ListPodSandbox called %d times, want %d", s.name, got, s.want)
		}
	}
}
