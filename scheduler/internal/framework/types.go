package framework

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// Requests assumed for a container that sets none, so that scoring spreads
// request-less pods instead of piling them on one node (upstream's values).
const (
	DefaultMilliCPURequest int64 = 100
	DefaultMemoryRequest   int64 = 200 * 1024 * 1024
)

var nonZeroDefaults = v1.ResourceList{
	v1.ResourceCPU:    *resource.NewMilliQuantity(DefaultMilliCPURequest, resource.DecimalSI),
	v1.ResourceMemory: *resource.NewQuantity(DefaultMemoryRequest, resource.BinarySI),
}

// Resource is an amount of compute resources; it implements fwk.Resource.
type Resource struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	AllowedPodNumber int
	ScalarResources  map[v1.ResourceName]int64
}

var _ fwk.Resource = &Resource{}

// NewResource converts a ResourceList.
func NewResource(rl v1.ResourceList) *Resource {
	r := &Resource{}
	r.Add(rl)
	return r
}

// GetMilliCPU implements fwk.Resource.
func (r *Resource) GetMilliCPU() int64 { return r.MilliCPU }

// GetMemory implements fwk.Resource.
func (r *Resource) GetMemory() int64 { return r.Memory }

// GetEphemeralStorage implements fwk.Resource.
func (r *Resource) GetEphemeralStorage() int64 { return r.EphemeralStorage }

// GetAllowedPodNumber implements fwk.Resource.
func (r *Resource) GetAllowedPodNumber() int { return r.AllowedPodNumber }

// GetScalarResources implements fwk.Resource.
func (r *Resource) GetScalarResources() map[v1.ResourceName]int64 { return r.ScalarResources }

// Add adds rl to r.
func (r *Resource) Add(rl v1.ResourceList) {
	for name, q := range rl {
		switch name {
		case v1.ResourceCPU:
			r.MilliCPU += q.MilliValue()
		case v1.ResourceMemory:
			r.Memory += q.Value()
		case v1.ResourcePods:
			r.AllowedPodNumber += int(q.Value())
		case v1.ResourceEphemeralStorage:
			r.EphemeralStorage += q.Value()
		default:
			if isScalar(name) {
				r.addScalar(name, q.Value())
			}
		}
	}
}

func (r *Resource) addScalar(name v1.ResourceName, v int64) {
	if r.ScalarResources == nil {
		r.ScalarResources = map[v1.ResourceName]int64{}
	}
	r.ScalarResources[name] += v
}

// SetMaxResource implements fwk.Resource: each resource becomes the larger
// of r's and rl's.
func (r *Resource) SetMaxResource(rl v1.ResourceList) {
	for name, q := range rl {
		switch name {
		case v1.ResourceCPU:
			r.MilliCPU = max(r.MilliCPU, q.MilliValue())
		case v1.ResourceMemory:
			r.Memory = max(r.Memory, q.Value())
		case v1.ResourceEphemeralStorage:
			r.EphemeralStorage = max(r.EphemeralStorage, q.Value())
		default:
			if isScalar(name) {
				if r.ScalarResources == nil {
					r.ScalarResources = map[v1.ResourceName]int64{}
				}
				r.ScalarResources[name] = max(r.ScalarResources[name], q.Value())
			}
		}
	}
}

// addResource adds o (scaled by sign, 1 or -1) to r.
func (r *Resource) addResource(o *Resource, sign int64) {
	r.MilliCPU += sign * o.MilliCPU
	r.Memory += sign * o.Memory
	r.EphemeralStorage += sign * o.EphemeralStorage
	r.AllowedPodNumber += int(sign) * o.AllowedPodNumber
	for k, v := range o.ScalarResources {
		r.addScalar(k, sign*v)
	}
}

// Clone returns a deep copy.
func (r *Resource) Clone() *Resource {
	c := *r
	if r.ScalarResources != nil {
		c.ScalarResources = make(map[v1.ResourceName]int64, len(r.ScalarResources))
		for k, v := range r.ScalarResources {
			c.ScalarResources[k] = v
		}
	}
	return &c
}

// isScalar reports whether name is kept in ScalarResources: extended
// resources (domain-qualified), prefixed native ones, hugepages and
// attachable volumes.
func isScalar(name v1.ResourceName) bool {
	s := string(name)
	return strings.HasPrefix(s, v1.ResourceHugePagesPrefix) ||
		strings.HasPrefix(s, v1.ResourceAttachableVolumesPrefix) ||
		(strings.Contains(s, "/") && !strings.HasPrefix(s, v1.DefaultResourceRequestsPrefix))
}

// PodInfo is a pod with its parsed affinity terms and requests; it
// implements fwk.PodInfo.
type PodInfo struct {
	Pod                        *v1.Pod
	RequiredAffinityTerms      []fwk.AffinityTerm
	RequiredAntiAffinityTerms  []fwk.AffinityTerm
	PreferredAffinityTerms     []fwk.WeightedAffinityTerm
	PreferredAntiAffinityTerms []fwk.WeightedAffinityTerm
	// ParseErr is the first error parsing the pod's affinity terms; such a
	// pod fails InterPodAffinity's PreFilter instead of crashing anything.
	ParseErr error
	res      fwk.PodResource
}

var _ fwk.PodInfo = &PodInfo{}

// NewPodInfo parses pod's affinity terms and sums its requests.
func NewPodInfo(pod *v1.Pod) *PodInfo {
	pi := &PodInfo{}
	pi.Update(pod)
	return pi
}

// Update re-parses pi from pod.
func (pi *PodInfo) Update(pod *v1.Pod) {
	*pi = PodInfo{Pod: pod}
	if a := pod.Spec.Affinity; a != nil {
		var errs []error
		var err error
		if a.PodAffinity != nil {
			pi.RequiredAffinityTerms, err = fwk.GetAffinityTerms(pod, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
			errs = append(errs, err)
			pi.PreferredAffinityTerms, err = fwk.GetWeightedAffinityTerms(pod, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
			errs = append(errs, err)
		}
		if a.PodAntiAffinity != nil {
			pi.RequiredAntiAffinityTerms, err = fwk.GetAffinityTerms(pod, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
			errs = append(errs, err)
			pi.PreferredAntiAffinityTerms, err = fwk.GetWeightedAffinityTerms(pod, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
			errs = append(errs, err)
		}
		for _, e := range errs {
			if e != nil {
				pi.ParseErr = fmt.Errorf("parse pod affinity terms: %w", e)
				break
			}
		}
	}
	pi.res = computePodResource(pod)
}

func computePodResource(pod *v1.Pod) fwk.PodResource {
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	nonZero := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{NonMissingContainerRequests: nonZeroDefaults})
	r := NewResource(reqs)
	return fwk.PodResource{Resource: r, Non0CPU: nonZero.Cpu().MilliValue(), Non0Mem: nonZero.Memory().Value()}
}

// GetPod implements fwk.PodInfo.
func (pi *PodInfo) GetPod() *v1.Pod { return pi.Pod }

// GetRequiredAffinityTerms implements fwk.PodInfo.
func (pi *PodInfo) GetRequiredAffinityTerms() []fwk.AffinityTerm { return pi.RequiredAffinityTerms }

// GetRequiredAntiAffinityTerms implements fwk.PodInfo.
func (pi *PodInfo) GetRequiredAntiAffinityTerms() []fwk.AffinityTerm {
	return pi.RequiredAntiAffinityTerms
}

// GetPreferredAffinityTerms implements fwk.PodInfo.
func (pi *PodInfo) GetPreferredAffinityTerms() []fwk.WeightedAffinityTerm {
	return pi.PreferredAffinityTerms
}

// GetPreferredAntiAffinityTerms implements fwk.PodInfo.
func (pi *PodInfo) GetPreferredAntiAffinityTerms() []fwk.WeightedAffinityTerm {
	return pi.PreferredAntiAffinityTerms
}

// CalculateResource implements fwk.PodInfo.
func (pi *PodInfo) CalculateResource() fwk.PodResource { return pi.res }

// NodeInfo is a node with the pods on it and their aggregate use; it
// implements fwk.NodeInfo.
type NodeInfo struct {
	node                             *v1.Node
	Pods                             []fwk.PodInfo
	PodsWithAffinity                 []fwk.PodInfo
	PodsWithRequiredAntiAffinity     []fwk.PodInfo
	PodsWithNonHostAntiAffinityCount int
	UsedPorts                        fwk.HostPortInfo
	Requested                        *Resource
	NonZeroRequested                 *Resource
	Allocatable                      *Resource
	ImageStates                      map[string]*fwk.ImageStateSummary
	PVCRefCounts                     map[string]int
	// Generation increases on every change, so a snapshot copies only the
	// nodes that changed since the last one.
	Generation int64
}

var _ fwk.NodeInfo = &NodeInfo{}

var generation atomic.Int64

// nextGeneration is shared by all NodeInfos so that generations order
// changes across nodes.
func nextGeneration() int64 { return generation.Add(1) }

// NewNodeInfo returns a NodeInfo holding pods (and no node yet).
func NewNodeInfo(pods ...*v1.Pod) *NodeInfo {
	ni := &NodeInfo{
		Requested:        &Resource{},
		NonZeroRequested: &Resource{},
		Allocatable:      &Resource{},
		UsedPorts:        fwk.HostPortInfo{},
		ImageStates:      map[string]*fwk.ImageStateSummary{},
		PVCRefCounts:     map[string]int{},
		Generation:       nextGeneration(),
	}
	for _, p := range pods {
		ni.AddPodInfo(NewPodInfo(p))
	}
	return ni
}

// Node implements fwk.NodeInfo.
func (n *NodeInfo) Node() *v1.Node {
	if n == nil {
		return nil
	}
	return n.node
}

// GetPods implements fwk.NodeInfo.
func (n *NodeInfo) GetPods() []fwk.PodInfo { return n.Pods }

// GetPodsWithAffinity implements fwk.NodeInfo.
func (n *NodeInfo) GetPodsWithAffinity() []fwk.PodInfo { return n.PodsWithAffinity }

// GetPodsWithRequiredAntiAffinity implements fwk.NodeInfo.
func (n *NodeInfo) GetPodsWithRequiredAntiAffinity() []fwk.PodInfo {
	return n.PodsWithRequiredAntiAffinity
}

// GetPodsWithRequiredNonHostScopedAntiAffinity implements fwk.NodeInfo.
func (n *NodeInfo) GetPodsWithRequiredNonHostScopedAntiAffinity() []fwk.PodInfo {
	var out []fwk.PodInfo
	for _, p := range n.PodsWithRequiredAntiAffinity {
		for _, t := range p.GetRequiredAntiAffinityTerms() {
			if t.TopologyKey != v1.LabelHostname {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// GetUsedPorts implements fwk.NodeInfo.
func (n *NodeInfo) GetUsedPorts() fwk.HostPortInfo { return n.UsedPorts }

// GetRequested implements fwk.NodeInfo.
func (n *NodeInfo) GetRequested() fwk.Resource { return n.Requested }

// GetNonZeroRequested implements fwk.NodeInfo.
func (n *NodeInfo) GetNonZeroRequested() fwk.Resource { return n.NonZeroRequested }

// GetAllocatable implements fwk.NodeInfo.
func (n *NodeInfo) GetAllocatable() fwk.Resource { return n.Allocatable }

// GetImageStates implements fwk.NodeInfo.
func (n *NodeInfo) GetImageStates() map[string]*fwk.ImageStateSummary { return n.ImageStates }

// GetPVCRefCounts implements fwk.NodeInfo.
func (n *NodeInfo) GetPVCRefCounts() map[string]int { return n.PVCRefCounts }

// GetGeneration implements fwk.NodeInfo.
func (n *NodeInfo) GetGeneration() int64 { return n.Generation }

// GetNodeDeclaredFeatures implements fwk.NodeInfo; trireme-scheduler does
// not evaluate node-declared features, so the set is empty.
func (n *NodeInfo) GetNodeDeclaredFeatures() ndf.FeatureSet { return ndf.FeatureSet{} }

// Snapshot implements fwk.NodeInfo: a copy whose slices and maps the
// original's later changes do not touch.
func (n *NodeInfo) Snapshot() fwk.NodeInfo { return n.Clone() }

// Clone returns a copy of n sharing only the immutable pod infos.
func (n *NodeInfo) Clone() *NodeInfo {
	c := &NodeInfo{
		node:                             n.node,
		Pods:                             append([]fwk.PodInfo(nil), n.Pods...),
		PodsWithAffinity:                 append([]fwk.PodInfo(nil), n.PodsWithAffinity...),
		PodsWithRequiredAntiAffinity:     append([]fwk.PodInfo(nil), n.PodsWithRequiredAntiAffinity...),
		PodsWithNonHostAntiAffinityCount: n.PodsWithNonHostAntiAffinityCount,
		UsedPorts:                        make(fwk.HostPortInfo, len(n.UsedPorts)),
		Requested:                        n.Requested.Clone(),
		NonZeroRequested:                 n.NonZeroRequested.Clone(),
		Allocatable:                      n.Allocatable.Clone(),
		ImageStates:                      n.ImageStates,
		PVCRefCounts:                     make(map[string]int, len(n.PVCRefCounts)),
		Generation:                       n.Generation,
	}
	for ip, m := range n.UsedPorts {
		cm := make(map[fwk.ProtocolPort]struct{}, len(m))
		for k := range m {
			cm[k] = struct{}{}
		}
		c.UsedPorts[ip] = cm
	}
	for k, v := range n.PVCRefCounts {
		c.PVCRefCounts[k] = v
	}
	return c
}

// String implements fwk.NodeInfo.
func (n *NodeInfo) String() string {
	name := "<nil>"
	if n.node != nil {
		name = n.node.Name
	}
	return fmt.Sprintf("&NodeInfo{Node:%s, Pods:%d, Requested:%+v, Allocatable:%+v}", name, len(n.Pods), *n.Requested, *n.Allocatable)
}

// AddPodInfo implements fwk.NodeInfo.
func (n *NodeInfo) AddPodInfo(pi fwk.PodInfo) {
	n.Pods = append(n.Pods, pi)
	if hasAffinity(pi) {
		n.PodsWithAffinity = append(n.PodsWithAffinity, pi)
	}
	if len(pi.GetRequiredAntiAffinityTerms()) > 0 {
		n.PodsWithRequiredAntiAffinity = append(n.PodsWithRequiredAntiAffinity, pi)
	}
	n.update(pi, 1)
}

func hasAffinity(pi fwk.PodInfo) bool {
	a := pi.GetPod().Spec.Affinity
	return a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil)
}

// RemovePod implements fwk.NodeInfo.
func (n *NodeInfo) RemovePod(_ klog.Logger, pod *v1.Pod) error {
	n.PodsWithAffinity = removeFrom(n.PodsWithAffinity, pod)
	n.PodsWithRequiredAntiAffinity = removeFrom(n.PodsWithRequiredAntiAffinity, pod)
	for i, pi := range n.Pods {
		if pi.GetPod().UID == pod.UID {
			n.Pods[i] = n.Pods[len(n.Pods)-1]
			n.Pods[len(n.Pods)-1] = nil
			n.Pods = n.Pods[:len(n.Pods)-1]
			n.update(pi, -1)
			return nil
		}
	}
	return fmt.Errorf("no pod %s/%s on node %s", pod.Namespace, pod.Name, n.Node().GetName())
}

func removeFrom(list []fwk.PodInfo, pod *v1.Pod) []fwk.PodInfo {
	for i, pi := range list {
		if pi.GetPod().UID == pod.UID {
			list[i] = list[len(list)-1]
			list[len(list)-1] = nil
			return list[:len(list)-1]
		}
	}
	return list
}

// update adds (sign 1) or removes (sign -1) pi's use of the node.
func (n *NodeInfo) update(pi fwk.PodInfo, sign int64) {
	res := pi.CalculateResource()
	if r, ok := res.Resource.(*Resource); ok {
		n.Requested.addResource(r, sign)
	}
	n.NonZeroRequested.MilliCPU += sign * res.Non0CPU
	n.NonZeroRequested.Memory += sign * res.Non0Mem
	pod := pi.GetPod()
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if sign > 0 {
				n.UsedPorts.Add(p.HostIP, string(p.Protocol), p.HostPort)
			} else {
				n.UsedPorts.Remove(p.HostIP, string(p.Protocol), p.HostPort)
			}
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			for _, p := range c.Ports {
				if sign > 0 {
					n.UsedPorts.Add(p.HostIP, string(p.Protocol), p.HostPort)
				} else {
					n.UsedPorts.Remove(p.HostIP, string(p.Protocol), p.HostPort)
				}
			}
		}
	}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			key := pod.Namespace + "/" + v.PersistentVolumeClaim.ClaimName
			n.PVCRefCounts[key] += int(sign)
			if n.PVCRefCounts[key] <= 0 {
				delete(n.PVCRefCounts, key)
			}
		}
	}
	n.Generation = nextGeneration()
}

// SetNode implements fwk.NodeInfo.
func (n *NodeInfo) SetNode(node *v1.Node) {
	n.node = node
	n.Allocatable = NewResource(node.Status.Allocatable)
	n.Generation = nextGeneration()
}

// QueuedPodInfo is a pod in the scheduling queue with its queueing history;
// it implements fwk.QueuedEntityInfo.
type QueuedPodInfo struct {
	*PodInfo
	// Timestamp is when the pod was last added to the queue.
	Timestamp time.Time
	// Attempts counts scheduling attempts.
	Attempts int
	// BackoffExpiration is when the pod may leave the backoff queue.
	BackoffExpiration time.Time
	// UnschedulableCount counts attempts that ended Unschedulable.
	UnschedulableCount int
	// ConsecutiveErrorsCount counts attempts in a row that ended in an error.
	ConsecutiveErrorsCount int
	// InitialAttemptTimestamp is when the pod was first popped.
	InitialAttemptTimestamp *time.Time
	// UnschedulablePlugins rejected the pod in its last attempt; events
	// those plugins registered move it back to the active queue.
	UnschedulablePlugins sets.Set[string]
	// PendingPlugins returned Pending in the last attempt.
	PendingPlugins sets.Set[string]
	// GatingPlugin is the PreEnqueue plugin keeping the pod out of the
	// active queue, if any.
	GatingPlugin       string
	GatingPluginEvents []fwk.ClusterEvent
}

var _ fwk.QueuedEntityInfo = &QueuedPodInfo{}

// Type implements fwk.QueuedEntityInfo.
func (q *QueuedPodInfo) Type() fwk.EntityKeyType { return fwk.PodKeyType }

// GetPriority implements fwk.QueuedEntityInfo.
func (q *QueuedPodInfo) GetPriority() int32 {
	if q.Pod.Spec.Priority != nil {
		return *q.Pod.Spec.Priority
	}
	return 0
}

// GetTimestamp implements fwk.QueuedEntityInfo.
func (q *QueuedPodInfo) GetTimestamp() time.Time { return q.Timestamp }

// GetAttempts implements fwk.QueuedEntityInfo.
func (q *QueuedPodInfo) GetAttempts() int { return q.Attempts }

// GetBackoffExpiration implements fwk.QueuedEntityInfo.
func (q *QueuedPodInfo) GetBackoffExpiration() time.Time { return q.BackoffExpiration }

// GetUnschedulableCount implements fwk.QueuedEntityInfo.
func (q *QueuedPodInfo) GetUnschedulableCount() int { return q.UnschedulableCount }

// GetConsecutiveErrorsCount implements fwk.QueuedEntityInfo.
func (q *QueuedPodInfo) GetConsecutiveErrorsCount() int { return q.ConsecutiveErrorsCount }

// GetInitialAttemptTimestamp implements fwk.QueuedEntityInfo.
func (q *QueuedPodInfo) GetInitialAttemptTimestamp() *time.Time { return q.InitialAttemptTimestamp }

// GetUnschedulablePlugins implements fwk.QueuedEntityInfo.
func (q *QueuedPodInfo) GetUnschedulablePlugins() sets.Set[string] { return q.UnschedulablePlugins }

// GetPendingPlugins implements fwk.QueuedEntityInfo.
func (q *QueuedPodInfo) GetPendingPlugins() sets.Set[string] { return q.PendingPlugins }

// GetGatingPlugin implements fwk.QueuedEntityInfo.
func (q *QueuedPodInfo) GetGatingPlugin() string { return q.GatingPlugin }

// GetGatingPluginEvents implements fwk.QueuedEntityInfo.
func (q *QueuedPodInfo) GetGatingPluginEvents() []fwk.ClusterEvent { return q.GatingPluginEvents }

// PodResourceOf sums pod's requests as NodeInfo accounts them.
func PodResourceOf(pod *v1.Pod) fwk.PodResource { return computePodResource(pod) }
