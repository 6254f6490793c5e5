package cache

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
)

func node(name string) *v1.Node {
	alloc := v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110")}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: alloc}}
}

func pod(name, nodeName, cpu string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name)},
		Spec: v1.PodSpec{NodeName: nodeName, Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)},
		}}}},
	}
}

func requestedCPU(t *testing.T, s *Snapshot, name string) int64 {
	t.Helper()
	ni, err := s.NodeInfos().Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return ni.GetRequested().GetMilliCPU()
}

func TestAssumeConfirmForget(t *testing.T) {
	c := New()
	c.AddNode(node("n1"))
	s := &Snapshot{}

	assumed := pod("p", "n1", "1")
	if err := c.AssumePod(assumed); err != nil {
		t.Fatal(err)
	}
	if err := c.AssumePod(assumed); err == nil {
		t.Error("assuming a pod twice succeeded")
	}
	c.UpdateSnapshot(s)
	if got := requestedCPU(t, s, "n1"); got != 1000 {
		t.Errorf("requested %dm after assume, want 1000m", got)
	}
	if !c.IsAssumed(assumed) {
		t.Error("pod not assumed")
	}
	// The informer confirms the binding.
	c.AddPod(pod("p", "n1", "1"))
	if c.IsAssumed(assumed) {
		t.Error("confirmed pod still assumed")
	}
	if err := c.ForgetPod(assumed); err == nil {
		t.Error("forgetting a confirmed pod succeeded")
	}
	c.UpdateSnapshot(s)
	if got := requestedCPU(t, s, "n1"); got != 1000 {
		t.Errorf("requested %dm after confirm, want 1000m", got)
	}

	// A failed binding is forgotten.
	other := pod("q", "n1", "2")
	if err := c.AssumePod(other); err != nil {
		t.Fatal(err)
	}
	if err := c.ForgetPod(other); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(s)
	if got := requestedCPU(t, s, "n1"); got != 1000 {
		t.Errorf("requested %dm after forget, want 1000m", got)
	}
	c.RemovePod(assumed)
	c.UpdateSnapshot(s)
	if got := requestedCPU(t, s, "n1"); got != 0 {
		t.Errorf("requested %dm after delete, want 0", got)
	}
}

func TestSnapshotCopiesOnlyChangedNodes(t *testing.T) {
	c := New()
	c.AddNode(node("n1"))
	c.AddNode(node("n2"))
	s := &Snapshot{}
	c.UpdateSnapshot(s)
	before1, before2 := s.Get("n1"), s.Get("n2")
	c.AddPod(pod("p", "n2", "1"))
	c.UpdateSnapshot(s)
	if s.Get("n1") != before1 {
		t.Error("unchanged node n1 was copied again")
	}
	if s.Get("n2") == before2 {
		t.Error("changed node n2 was not copied")
	}
	if before2.GetRequested().GetMilliCPU() != 0 {
		t.Error("the earlier snapshot changed under its reader")
	}
	c.RemoveNode(node("n1"))
	c.UpdateSnapshot(s)
	if s.NumNodes() != 1 || s.Get("n1") != nil {
		t.Errorf("removed node still in the snapshot")
	}
}

func TestPodBeforeNodeAndNodeRemovedWithPods(t *testing.T) {
	c := New()
	c.AddPod(pod("early", "n1", "1"))
	s := &Snapshot{}
	c.UpdateSnapshot(s)
	if s.NumNodes() != 0 {
		t.Errorf("a node-less entry is in the snapshot")
	}
	c.AddNode(node("n1"))
	c.UpdateSnapshot(s)
	if got := requestedCPU(t, s, "n1"); got != 1000 {
		t.Errorf("pod that arrived first not counted: %dm", got)
	}
	c.RemoveNode(node("n1"))
	c.UpdateSnapshot(s)
	if s.NumNodes() != 0 {
		t.Error("removed node in the snapshot")
	}
	if c.PodCount() != 1 {
		t.Errorf("pods on a removed node are forgotten: %d", c.PodCount())
	}
}

func TestImageStates(t *testing.T) {
	c := New()
	n1, n2 := node("n1"), node("n2")
	n1.Status.Images = []v1.ContainerImage{{Names: []string{"img:1"}, SizeBytes: 100}}
	n2.Status.Images = []v1.ContainerImage{{Names: []string{"img:1"}, SizeBytes: 100}}
	c.AddNode(n1)
	c.AddNode(n2)
	s := &Snapshot{}
	c.UpdateSnapshot(s)
	st := s.Get("n1").GetImageStates()["img:1"]
	if st == nil || st.NumNodes != 2 || st.Size != 100 {
		t.Errorf("image state %+v, want on 2 nodes, 100 bytes", st)
	}
}

// TestIncrementalSnapshotMatchesFull checks that updating the same
// snapshot cycle after cycle (visiting only changed nodes) ends where a
// fresh snapshot of the same cache does.
func TestIncrementalSnapshotMatchesFull(t *testing.T) {
	c := New()
	c.AddNode(node("a"))
	c.AddNode(node("b"))
	inc := &Snapshot{}
	anti := pod("anti", "b", "100m")
	anti.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}, TopologyKey: v1.LabelHostname,
	}}}}
	// A second anti-affinity pod, by zone, so that the lists hold two
	// nodes and removing the first moves the other.
	anti2 := pod("anti2", "a", "100m")
	anti2.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}, TopologyKey: v1.LabelTopologyZone,
	}}}}
	steps := []struct {
		name   string
		change func()
	}{
		{name: "start", change: func() {}},
		{name: "assume", change: func() { _ = c.AssumePod(pod("p1", "a", "500m")) }},
		{name: "confirm", change: func() { c.AddPod(pod("p1", "a", "500m")) }},
		{name: "anti-affinity pod", change: func() { c.AddPod(anti) }},
		{name: "node added", change: func() { c.AddNode(node("c")) }},
		{name: "pod on new node", change: func() { c.AddPod(pod("p2", "c", "1")) }},
		{name: "zone anti-affinity pod", change: func() { c.AddPod(anti2) }},
		{name: "anti-affinity pod gone", change: func() { c.RemovePod(anti) }},
		{name: "zone anti-affinity pod gone", change: func() { c.RemovePod(anti2) }},
		{name: "node removed", change: func() { c.RemovePod(pod("p2", "c", "1")); c.RemoveNode(node("c")) }},
		{name: "forget", change: func() {
			_ = c.AssumePod(pod("p3", "b", "2"))
			c.UpdateSnapshot(inc)
			_ = c.ForgetPod(pod("p3", "b", "2"))
		}},
	}
	for _, st := range steps {
		st.change()
		c.UpdateSnapshot(inc)
		// A fresh snapshot by a full scan, which leaves the cache's
		// record of what changed since inc's update alone.
		full := &Snapshot{}
		c.mu.Lock()
		c.fullUpdate(full)
		c.mu.Unlock()
		if inc.NumNodes() != full.NumNodes() {
			t.Fatalf("%s: %d nodes, fresh snapshot has %d", st.name, inc.NumNodes(), full.NumNodes())
		}
		for _, ni := range full.list {
			name := ni.Node().Name
			if got, want := requestedCPU(t, inc, name), requestedCPU(t, full, name); got != want {
				t.Errorf("%s: node %s requests %dm, fresh snapshot says %dm", st.name, name, got, want)
			}
			if inc.list[inc.index[name]].Node().Name != name {
				t.Errorf("%s: index of %s is stale", st.name, name)
			}
		}
		for list, pair := range map[string][2]subset{
			"affinity":               {inc.withAffinity, full.withAffinity},
			"anti-affinity":          {inc.withAntiAffinity, full.withAntiAffinity},
			"non-host anti-affinity": {inc.withNonHostAntiAffinity, full.withNonHostAntiAffinity},
		} {
			got, want := members(t, inc, pair[0]), members(t, full, pair[1])
			if got != want {
				t.Errorf("%s: nodes with %s pods %s, fresh snapshot has %s", st.name, list, got, want)
			}
		}
	}
}

// TestIncrementalSnapshotCopiesEveryDirtyNode changes many nodes between
// two updates, so that their generations interleave in any visiting order.
func TestIncrementalSnapshotCopiesEveryDirtyNode(t *testing.T) {
	c := New()
	names := []string{"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"}
	for _, n := range names {
		c.AddNode(node(n))
	}
	s := &Snapshot{}
	c.UpdateSnapshot(s)
	for round := range 5 {
		for i, n := range names {
			_ = c.AssumePod(pod(fmt.Sprintf("p%d-%d", round, i), n, "100m"))
		}
		c.UpdateSnapshot(s)
		for _, n := range names {
			if got := requestedCPU(t, s, n); got != int64(100*(round+1)) {
				t.Fatalf("round %d: node %s requests %dm in the snapshot, want %dm", round, n, got, 100*(round+1))
			}
		}
	}
}

// members lists a derived list's node names, sorted, checking that each
// entry is the snapshot's current NodeInfo and sits where pos says.
func members(t *testing.T, s *Snapshot, d subset) string {
	t.Helper()
	var names []string
	for i, ni := range d.list {
		name := ni.Node().Name
		if ni != fwk.NodeInfo(s.infos[name]) {
			t.Errorf("derived list holds a stale copy of %s", name)
		}
		if d.pos[name] != i {
			t.Errorf("derived list places %s at %d, pos says %d", name, i, d.pos[name])
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}
