package cache

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/framework"
)

type podState struct {
	pod *v1.Pod
	// assumed pods are placed by this scheduler and not yet seen bound by
	// the informer.
	assumed bool
}

type imageState struct {
	size  int64
	nodes sets.Set[string]
}

// Cache holds nodes and the pods on them. Every method is safe for
// concurrent use.
type Cache struct {
	mu     sync.RWMutex
	nodes  map[string]*framework.NodeInfo
	order  []string // node names in arrival order, for a stable snapshot order
	pods   map[types.UID]*podState
	images map[string]*imageState
	// dirty names the nodes changed since UpdateSnapshot last brought
	// last up to date, and reshaped says whether the set of nodes itself
	// changed meanwhile; with them an update copies only what changed
	// instead of scanning every node each cycle.
	dirty    map[string]struct{}
	reshaped bool
	last     *Snapshot
}

// New returns an empty cache.
func New() *Cache {
	return &Cache{
		nodes:  map[string]*framework.NodeInfo{},
		pods:   map[types.UID]*podState{},
		images: map[string]*imageState{},
		dirty:  map[string]struct{}{},
	}
}

// nodeInfo returns name's entry, creating one without a node when a pod
// arrives before its node does.
func (c *Cache) nodeInfo(name string) *framework.NodeInfo {
	c.dirty[name] = struct{}{}
	ni, ok := c.nodes[name]
	if !ok {
		ni = framework.NewNodeInfo()
		c.nodes[name] = ni
		c.order = append(c.order, name)
	}
	return ni
}

// AssumePod places pod (with spec.nodeName set) on its node before the
// binding is written, so that the next cycles see the node's capacity
// taken.
func (c *Cache) AssumePod(pod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pods[pod.UID]; ok {
		return fmt.Errorf("pod %s/%s (%s) is already in the cache", pod.Namespace, pod.Name, pod.UID)
	}
	c.nodeInfo(pod.Spec.NodeName).AddPodInfo(framework.NewPodInfo(pod))
	c.pods[pod.UID] = &podState{pod: pod, assumed: true}
	return nil
}

// ForgetPod undoes AssumePod after a failed binding.
func (c *Cache) ForgetPod(pod *v1.Pod) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	if !ok || !ps.assumed {
		return fmt.Errorf("pod %s/%s is not assumed", pod.Namespace, pod.Name)
	}
	c.removePod(ps.pod)
	delete(c.pods, pod.UID)
	return nil
}

// IsAssumed reports whether pod is assumed and not yet confirmed.
func (c *Cache) IsAssumed(pod *v1.Pod) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ps, ok := c.pods[pod.UID]
	return ok && ps.assumed
}

// AddPod records an assigned pod the informer saw, confirming it if it
// was assumed.
func (c *Cache) AddPod(pod *v1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.pods[pod.UID]; ok {
		if ps.assumed && ps.pod.Spec.NodeName == pod.Spec.NodeName {
			// Confirmed: swap in the real object, which may differ in
			// labels or status.
			c.updatePod(ps.pod, pod)
			ps.pod, ps.assumed = pod, false
			return
		}
		c.removePod(ps.pod)
	}
	c.nodeInfo(pod.Spec.NodeName).AddPodInfo(framework.NewPodInfo(pod))
	c.pods[pod.UID] = &podState{pod: pod}
}

// UpdatePod records a change to an assigned pod.
func (c *Cache) UpdatePod(old, pod *v1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	if !ok {
		c.nodeInfo(pod.Spec.NodeName).AddPodInfo(framework.NewPodInfo(pod))
		c.pods[pod.UID] = &podState{pod: pod}
		return
	}
	c.updatePod(ps.pod, pod)
	ps.pod, ps.assumed = pod, false
}

func (c *Cache) updatePod(old, pod *v1.Pod) {
	c.removePod(old)
	c.nodeInfo(pod.Spec.NodeName).AddPodInfo(framework.NewPodInfo(pod))
}

// RemovePod forgets a deleted pod.
func (c *Cache) RemovePod(pod *v1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[pod.UID]
	if !ok {
		return
	}
	c.removePod(ps.pod)
	delete(c.pods, pod.UID)
}

func (c *Cache) removePod(pod *v1.Pod) {
	ni, ok := c.nodes[pod.Spec.NodeName]
	if !ok {
		return
	}
	c.dirty[pod.Spec.NodeName] = struct{}{}
	_ = ni.RemovePod(klog.Background(), pod)
	if ni.Node() == nil && len(ni.Pods) == 0 {
		c.deleteNodeEntry(pod.Spec.NodeName)
	}
}

func (c *Cache) deleteNodeEntry(name string) {
	c.reshaped = true
	delete(c.nodes, name)
	for i, n := range c.order {
		if n == name {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}

// AddNode records a node.
func (c *Cache) AddNode(node *v1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ni := c.nodeInfo(node.Name)
	if ni.Node() == nil {
		c.reshaped = true
	}
	c.removeImages(ni.Node())
	ni.SetNode(node)
	c.addImages(node)
}

// UpdateNode records a node change.
func (c *Cache) UpdateNode(_, node *v1.Node) { c.AddNode(node) }

// RemoveNode forgets a node; pods still bound to it keep a node-less entry
// until they go.
func (c *Cache) RemoveNode(node *v1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ni, ok := c.nodes[node.Name]
	if !ok {
		return
	}
	c.removeImages(ni.Node())
	c.reshaped = true
	c.dirty[node.Name] = struct{}{}
	if len(ni.Pods) == 0 {
		c.deleteNodeEntry(node.Name)
		return
	}
	// Keep the pods, drop the node: a fresh entry without a node.
	fresh := framework.NewNodeInfo()
	for _, p := range ni.Pods {
		fresh.AddPodInfo(p)
	}
	c.nodes[node.Name] = fresh
}

func (c *Cache) addImages(node *v1.Node) {
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			st, ok := c.images[name]
			if !ok {
				st = &imageState{size: img.SizeBytes, nodes: sets.New[string]()}
				c.images[name] = st
			}
			st.nodes.Insert(node.Name)
		}
	}
}

func (c *Cache) removeImages(node *v1.Node) {
	if node == nil {
		return
	}
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			if st, ok := c.images[name]; ok {
				st.nodes.Delete(node.Name)
				if st.nodes.Len() == 0 {
					delete(c.images, name)
				}
			}
		}
	}
}

// NodeCount counts the nodes (with a Node object).
func (c *Cache) NodeCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := 0
	for _, ni := range c.nodes {
		if ni.Node() != nil {
			n++
		}
	}
	return n
}

// PodCount counts assigned and assumed pods.
func (c *Cache) PodCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.pods)
}

// UpdateSnapshot brings s up to date, copying only the nodes that changed
// since s was last updated. For the snapshot it updated last it visits
// only the nodes changed since (the scheduler's case: one node per
// cycle); any other snapshot gets a full scan.
func (c *Cache) UpdateSnapshot(s *Snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.infos == nil || s != c.last || c.reshaped || s.list == nil {
		c.fullUpdate(s)
	} else {
		c.incrementalUpdate(s)
	}
	c.last = s
	c.reshaped = false
	clear(c.dirty)
}

// incrementalUpdate copies the dirty nodes into s, whose node set is
// unchanged, and updates the derived lists node by node; only a change to
// the PVCs in use rescans every node.
func (c *Cache) incrementalUpdate(s *Snapshot) {
	repvc := false
	maxGen := s.generation
	for name := range c.dirty {
		ni := c.nodes[name]
		if ni == nil || ni.Node() == nil {
			continue
		}
		// Every dirty node is copied: comparing its generation with the
		// snapshot's while the latter moves would skip some.
		old := s.infos[name]
		cl := ni.Clone()
		cl.ImageStates = c.imageSummaries(ni.Node())
		s.infos[name] = cl
		s.list[s.index[name]] = cl
		maxGen = max(maxGen, ni.Generation)
		if tracked(old) || tracked(cl) {
			s.deriveNode(cl)
		}
		if (old != nil && len(old.PVCRefCounts) > 0) || len(cl.PVCRefCounts) > 0 {
			repvc = true
		}
	}
	s.generation = maxGen
	if repvc {
		s.pvcs = sets.New[string]()
		for _, ni := range s.list {
			for k := range ni.(*framework.NodeInfo).PVCRefCounts {
				s.pvcs.Insert(k)
			}
		}
	}
}

// tracked reports whether ni holds pods the snapshot's derived lists (of
// affinity, anti-affinity and PVC users) follow.
func tracked(ni *framework.NodeInfo) bool {
	return ni != nil && (len(ni.PodsWithAffinity) > 0 || len(ni.PodsWithRequiredAntiAffinity) > 0 || len(ni.PVCRefCounts) > 0)
}

// fullUpdate scans every node.
func (c *Cache) fullUpdate(s *Snapshot) {
	if s.infos == nil {
		s.infos = map[string]*framework.NodeInfo{}
	}
	maxGen := s.generation
	changed := false
	for name, ni := range c.nodes {
		if ni.Node() == nil {
			continue
		}
		if ni.Generation > s.generation {
			cl := ni.Clone()
			cl.ImageStates = c.imageSummaries(ni.Node())
			s.infos[name] = cl
			changed = true
		}
		maxGen = max(maxGen, ni.Generation)
	}
	for name := range s.infos {
		if ni, ok := c.nodes[name]; !ok || ni.Node() == nil {
			delete(s.infos, name)
			changed = true
		}
	}
	s.generation = maxGen
	if !changed && s.list != nil {
		return
	}
	s.list = s.list[:0]
	if s.index == nil {
		s.index = map[string]int{}
	}
	clear(s.index)
	for _, name := range c.order {
		ni, ok := s.infos[name]
		if !ok {
			continue
		}
		s.index[name] = len(s.list)
		s.list = append(s.list, ni)
	}
	s.derive()
}

func (c *Cache) imageSummaries(node *v1.Node) map[string]*fwk.ImageStateSummary {
	out := map[string]*fwk.ImageStateSummary{}
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			if st, ok := c.images[name]; ok {
				out[name] = &fwk.ImageStateSummary{Size: st.size, NumNodes: st.nodes.Len()}
			}
		}
	}
	return out
}
