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
	withAffinity            []fwk.NodeInfo
	withAntiAffinity        []fwk.NodeInfo
	withNonHostAntiAffinity []fwk.NodeInfo
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

// derive rebuilds the lists of nodes with affinity and anti-affinity pods
// and the set of PVCs in use from list.
func (s *Snapshot) derive() {
	s.withAffinity = s.withAffinity[:0]
	s.withAntiAffinity = s.withAntiAffinity[:0]
	s.withNonHostAntiAffinity = s.withNonHostAntiAffinity[:0]
	s.pvcs = sets.New[string]()
	for _, fni := range s.list {
		ni := fni.(*framework.NodeInfo)
		if len(ni.PodsWithAffinity) > 0 {
			s.withAffinity = append(s.withAffinity, ni)
		}
		if len(ni.PodsWithRequiredAntiAffinity) > 0 {
			s.withAntiAffinity = append(s.withAntiAffinity, ni)
			if len(ni.GetPodsWithRequiredNonHostScopedAntiAffinity()) > 0 {
				s.withNonHostAntiAffinity = append(s.withNonHostAntiAffinity, ni)
			}
		}
		for k := range ni.PVCRefCounts {
			s.pvcs.Insert(k)
		}
	}
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
	return l.s.withAffinity, nil
}
func (l nodeLister) HavePodsWithRequiredAntiAffinityList() ([]fwk.NodeInfo, error) {
	return l.s.withAntiAffinity, nil
}
func (l nodeLister) HavePodsWithRequiredNonHostScopedAntiAffinityList() ([]fwk.NodeInfo, error) {
	return l.s.withNonHostAntiAffinity, nil
}
func (l nodeLister) Get(name string) (fwk.NodeInfo, error) {
	if ni, ok := l.s.infos[name]; ok {
		return ni, nil
	}
	return nil, fmt.Errorf("nodeinfo not found for node name %q", name)
}

type storageLister struct{ s *Snapshot }

func (l storageLister) IsPVCUsedByPods(key string) bool { return l.s.pvcs.Has(key) }
