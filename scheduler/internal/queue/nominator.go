package queue

import (
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// Nominator remembers the node each preempting pod was nominated to, so
// that lower-priority pods do not take the room its victims free. It
// implements fwk.PodNominator.
type Nominator struct {
	mu     sync.RWMutex
	byNode map[string][]fwk.PodInfo
	byUID  map[types.UID]string
	// count is len(byUID), readable without the lock: Filter asks about
	// every node of every cycle, and there is mostly nothing nominated.
	count atomic.Int64
}

var _ fwk.PodNominator = &Nominator{}

// NewNominator returns an empty nominator.
func NewNominator() *Nominator {
	return &Nominator{byNode: map[string][]fwk.PodInfo{}, byUID: map[types.UID]string{}}
}

// AddNominatedPod implements fwk.PodNominator. Without a nominating info
// in override mode, the pod's status.nominatedNodeName is used.
func (n *Nominator) AddNominatedPod(_ klog.Logger, pi fwk.PodInfo, ni *fwk.NominatingInfo) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.add(pi, ni)
}

func (n *Nominator) add(pi fwk.PodInfo, ni *fwk.NominatingInfo) {
	pod := pi.GetPod()
	n.delete(pod)
	node := pod.Status.NominatedNodeName
	if ni.Mode() == fwk.ModeOverride {
		node = ni.NominatedNodeName
	}
	if node == "" || pod.Spec.NodeName != "" {
		return
	}
	n.byUID[pod.UID] = node
	n.byNode[node] = append(n.byNode[node], pi)
	n.count.Store(int64(len(n.byUID)))
}

// DeleteNominatedPodIfExists implements fwk.PodNominator.
func (n *Nominator) DeleteNominatedPodIfExists(pod *v1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.delete(pod)
}

func (n *Nominator) delete(pod *v1.Pod) {
	node, ok := n.byUID[pod.UID]
	if !ok {
		return
	}
	list := n.byNode[node]
	for i, pi := range list {
		if pi.GetPod().UID == pod.UID {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(n.byNode, node)
	} else {
		n.byNode[node] = list
	}
	delete(n.byUID, pod.UID)
	n.count.Store(int64(len(n.byUID)))
}

// UpdateNominatedPod implements fwk.PodNominator: a nomination the
// scheduler made survives an update that does not carry it yet.
func (n *Nominator) UpdateNominatedPod(_ klog.Logger, old *v1.Pod, pi fwk.PodInfo) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var ni *fwk.NominatingInfo
	if node, ok := n.byUID[old.UID]; ok && pi.GetPod().Status.NominatedNodeName == "" {
		ni = &fwk.NominatingInfo{NominatedNodeName: node, NominatingMode: fwk.ModeOverride}
	}
	n.add(pi, ni)
}

// NominatedPodsForNode implements fwk.PodNominator.
func (n *Nominator) NominatedPodsForNode(node string) []fwk.PodInfo {
	if n.count.Load() == 0 {
		return nil
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return append([]fwk.PodInfo(nil), n.byNode[node]...)
}
