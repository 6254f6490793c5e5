package cache

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/framework"
)

// Snapshot is the cache as of the start of a scheduling cycle; plugins
// read it through fwk.SharedLister. It is not safe for concurrent
// updates, only for concurrent reads between updates.
type Snapshot struct {
	infos                   map[string]*framework.NodeInfo
	list                    []fwk.NodeInfo
	index                   map[string]int // position in list by node name
	withAffinity            subset
	withAntiAffinity        subset
	withNonHostAntiAffinity subset
	pvcs                    sets.Set[string]
	generation              int64
}

var _ fwk.SharedLister = &Snapshot{}

// NewSnapshot builds a snapshot from nodes and pods, for tests.
func NewSnapshot(pods []*v1.Pod, nodes []*v1.Node) *Snapshot {
	c := New()
	for _, n := range nodes {
		c.AddNode(n)
	}
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			c.AddPod(p)
		}
	}
	s := &Snapshot{}
	c.UpdateSnapshot(s)
	return s
}

// subset is a derived list of nodes, with each member's position so that
// one node joining, leaving or changing costs O(1) instead of a scan of
// every node. Members are in no particular order: the plugins reading
// these lists only sum over them.
type subset struct {
	list []fwk.NodeInfo
	pos  map[string]int
}

func (d *subset) reset() {
	d.list = d.list[:0]
	if d.pos == nil {
		d.pos = map[string]int{}
	}
	clear(d.pos)
}

// set makes ni (named name) a member when in, else removes name.
func (d *subset) set(name string, ni fwk.NodeInfo, in bool) {
	i, ok := d.pos[name]
	switch {
	case in && ok:
		d.list[i] = ni
	case in:
		d.pos[name] = len(d.list)
		d.list = append(d.list, ni)
	case ok:
		last := len(d.list) - 1
		moved := d.list[last]
		d.list[i] = moved
		d.pos[moved.Node().Name] = i
		d.list[last] = nil
		d.list = d.list[:last]
		delete(d.pos, name)
	}
}

// derive rebuilds the lists of nodes with affinity and anti-affinity pods
// and the set of PVCs in use from list.
func (s *Snapshot) derive() {
	s.withAffinity.reset()
	s.withAntiAffinity.reset()
	s.withNonHostAntiAffinity.reset()
	s.pvcs = sets.New[string]()
	for _, fni := range s.list {
		s.deriveNode(fni.(*framework.NodeInfo))
		for k := range fni.(*framework.NodeInfo).PVCRefCounts {
			s.pvcs.Insert(k)
		}
	}
}

// deriveNode puts ni in or out of each derived list.
func (s *Snapshot) deriveNode(ni *framework.NodeInfo) {
	name := ni.Node().Name
	s.withAffinity.set(name, ni, len(ni.PodsWithAffinity) > 0)
	anti := len(ni.PodsWithRequiredAntiAffinity) > 0
	s.withAntiAffinity.set(name, ni, anti)
	s.withNonHostAntiAffinity.set(name, ni, anti && len(ni.GetPodsWithRequiredNonHostScopedAntiAffinity()) > 0)
}

// NodeInfos implements fwk.SharedLister.
func (s *Snapshot) NodeInfos() fwk.NodeInfoLister { return nodeLister{s} }

// StorageInfos implements fwk.SharedLister.
func (s *Snapshot) StorageInfos() fwk.StorageInfoLister { return storageLister{s} }

// PodGroupStates implements fwk.SharedLister; pod groups are not tracked.
func (s *Snapshot) PodGroupStates() fwk.PodGroupStateLister { return nil }

// PodGroups implements fwk.SharedLister; pod groups are not tracked.
func (s *Snapshot) PodGroups() fwk.PodGroupLister { return nil }

// CompositePodGroupStates implements fwk.SharedLister.
func (s *Snapshot) CompositePodGroupStates() fwk.CompositePodGroupStateLister { return nil }

// CompositePodGroups implements fwk.SharedLister.
func (s *Snapshot) CompositePodGroups() fwk.CompositePodGroupLister { return nil }

// NumNodes counts the snapshot's nodes.
func (s *Snapshot) NumNodes() int { return len(s.list) }

// Get returns a node's info, or nil.
func (s *Snapshot) Get(name string) *framework.NodeInfo { return s.infos[name] }

type nodeLister struct{ s *Snapshot }

func (l nodeLister) List() ([]fwk.NodeInfo, error) { return l.s.list, nil }
func (l nodeLister) HavePodsWithAffinityList() ([]fwk.NodeInfo, error) {
	return l.s.withAffinity.list, nil
}
func (l nodeLister) HavePodsWithRequiredAntiAffinityList() ([]fwk.NodeInfo, error) {
	return l.s.withAntiAffinity.list, nil
}
func (l nodeLister) HavePodsWithRequiredNonHostScopedAntiAffinityList() ([]fwk.NodeInfo, error) {
	return l.s.withNonHostAntiAffinity.list, nil
}
func (l nodeLister) Get(name string) (fwk.NodeInfo, error) {
	if ni, ok := l.s.infos[name]; ok {
		return ni, nil
	}
	return nil, fmt.Errorf("nodeinfo not found for node name %q", name)
}

type storageLister struct{ s *Snapshot }

func (l storageLister) IsPVCUsedByPods(key string) bool { return l.s.pvcs.Has(key) }
