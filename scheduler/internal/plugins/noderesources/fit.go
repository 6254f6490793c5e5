// Package noderesources holds the NodeResourcesFit plugin (a pod fits a
// node with room for its requests; nodes are scored by a strategy:
// LeastAllocated, MostAllocated or RequestedToCapacityRatio) and the
// NodeResourcesBalancedAllocation plugin (nodes whose resources would be
// used evenly score higher).
package noderesources

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/scheduler/internal/framework"
)

// Names in the configuration.
const (
	FitName                = "NodeResourcesFit"
	BalancedAllocationName = "NodeResourcesBalancedAllocation"
)

const preFilterKey fwk.StateKey = "PreFilter" + FitName

// Fit implements PreFilter, Filter and Score.
type Fit struct {
	ignored       sets.Set[string]
	ignoredGroups sets.Set[string]
	scorer        *scorer
}

// NewFit is NodeResourcesFit's factory.
func NewFit(_ context.Context, obj runtime.Object, _ fwk.Handle) (fwk.Plugin, error) {
	args, _ := obj.(*configv1.NodeResourcesFitArgs)
	if args == nil {
		args = &configv1.NodeResourcesFitArgs{}
	}
	strategy := args.ScoringStrategy
	if strategy == nil {
		strategy = &configv1.ScoringStrategy{Type: configv1.LeastAllocated}
	}
	resources := strategy.Resources
	if len(resources) == 0 {
		resources = []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}
	}
	s := &scorer{resources: resources, useRequested: false}
	switch strategy.Type {
	case configv1.LeastAllocated, "":
		s.resourceScore = leastAllocated
	case configv1.MostAllocated:
		s.resourceScore = mostAllocated
	case configv1.RequestedToCapacityRatio:
		if strategy.RequestedToCapacityRatio == nil || len(strategy.RequestedToCapacityRatio.Shape) == 0 {
			return nil, fmt.Errorf("scoring strategy RequestedToCapacityRatio needs a shape")
		}
		s.resourceScore = requestedToCapacityRatio(strategy.RequestedToCapacityRatio.Shape)
		// Upstream rounds this strategy's mean to the nearest integer.
		s.roundNearest = true
	default:
		return nil, fmt.Errorf("scoring strategy %s is not supported", strategy.Type)
	}
	return &Fit{ignored: sets.New(args.IgnoredResources...), ignoredGroups: sets.New(args.IgnoredResourceGroups...), scorer: s}, nil
}

// Name implements fwk.Plugin.
func (*Fit) Name() string { return FitName }

type preFilterState struct {
	req *framework.Resource
	res fwk.PodResource
}

func (s *preFilterState) Clone() fwk.StateData { return s }

// PreFilter implements fwk.PreFilterPlugin: it sums the pod's requests
// (init and sidecar containers and overhead included).
func (f *Fit) PreFilter(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	res := framework.PodResourceOf(pod)
	req, _ := res.Resource.(*framework.Resource)
	state.Write(preFilterKey, &preFilterState{req: req, res: res})
	return nil, nil
}

func podRequest(pod *v1.Pod) *framework.Resource {
	r, _ := framework.PodResourceOf(pod).Resource.(*framework.Resource)
	return r
}

// podResource reads the pod's requests from the cycle state, computing
// them when PreFilter did not run.
func podResource(state fwk.CycleState, pod *v1.Pod) fwk.PodResource {
	if d, err := state.Read(preFilterKey); err == nil {
		return d.(*preFilterState).res
	}
	return framework.PodResourceOf(pod)
}

// PreFilterExtensions implements fwk.PreFilterPlugin.
func (*Fit) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// InsufficientResource is one resource a node lacks for a pod.
type InsufficientResource struct {
	Name   v1.ResourceName
	Reason string
	// Unresolvable is set when even an empty node would be too small.
	Unresolvable bool
}

// Filter implements fwk.FilterPlugin.
func (f *Fit) Filter(_ context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	var req *framework.Resource
	if d, err := state.Read(preFilterKey); err == nil {
		req = d.(*preFilterState).req
	} else {
		req = podRequest(pod)
	}
	insufficient := Fits(req, ni, f.ignored, f.ignoredGroups)
	if len(insufficient) == 0 {
		return nil
	}
	// A request no empty node could meet makes preemption pointless there.
	code := fwk.Unschedulable
	reasons := make([]string, 0, len(insufficient))
	for _, r := range insufficient {
		reasons = append(reasons, r.Reason)
		if r.Unresolvable {
			code = fwk.UnschedulableAndUnresolvable
		}
	}
	return fwk.NewStatus(code, reasons...)
}

// Fits lists what node ni lacks for a pod requesting req.
func Fits(req *framework.Resource, ni fwk.NodeInfo, ignored, ignoredGroups sets.Set[string]) []InsufficientResource {
	var out []InsufficientResource
	alloc := ni.GetAllocatable()
	used := ni.GetRequested()
	if len(ni.GetPods())+1 > alloc.GetAllowedPodNumber() {
		out = append(out, InsufficientResource{Name: v1.ResourcePods, Reason: "Too many pods", Unresolvable: alloc.GetAllowedPodNumber() == 0})
	}
	check := func(name v1.ResourceName, want, have, total int64) {
		if want > 0 && want > total-have {
			out = append(out, InsufficientResource{Name: name, Reason: "Insufficient " + string(name), Unresolvable: want > total})
		}
	}
	check(v1.ResourceCPU, req.MilliCPU, used.GetMilliCPU(), alloc.GetMilliCPU())
	check(v1.ResourceMemory, req.Memory, used.GetMemory(), alloc.GetMemory())
	check(v1.ResourceEphemeralStorage, req.EphemeralStorage, used.GetEphemeralStorage(), alloc.GetEphemeralStorage())
	for name, want := range req.ScalarResources {
		if ignored.Has(string(name)) {
			continue
		}
		if i := strings.Index(string(name), "/"); i > 0 && ignoredGroups.Has(string(name)[:i]) {
			continue
		}
		check(name, want, used.GetScalarResources()[name], alloc.GetScalarResources()[name])
	}
	return out
}

// Score implements fwk.ScorePlugin with the configured strategy.
func (f *Fit) Score(_ context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	return f.scorer.scoreNode(podResource(state, pod), ni), nil
}

// ScoreExtensions implements fwk.ScorePlugin.
func (*Fit) ScoreExtensions() fwk.ScoreExtensions { return nil }

// EventsToRegister implements fwk.EnqueueExtensions.
func (*Fit) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete | fwk.UpdatePodScaleDown}, QueueingHintFn: isSchedulableAfterPodChange},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAllocatable}, QueueingHintFn: isSchedulableAfterNodeChange},
	}, nil
}

// scorer scores a node from each configured resource's requested and
// allocatable amounts.
type scorer struct {
	resources []configv1.ResourceSpec
	// useRequested scores with the pods' actual requests; otherwise a
	// container without requests counts as 100m CPU and 200MiB, so that
	// request-less pods spread.
	useRequested bool
	// resourceScore scores one resource, 0-100; a node's score is the
	// weighted mean over the resources it has.
	resourceScore func(requested, allocatable int64) int64
	// roundNearest rounds the mean rather than truncating it.
	roundNearest bool
}

func (s *scorer) scoreNode(res fwk.PodResource, ni fwk.NodeInfo) int64 {
	var score, wsum int64
	for _, r := range s.resources {
		alloc, req := amount(ni, res, v1.ResourceName(r.Name), s.useRequested)
		if alloc == 0 {
			continue
		}
		score += s.resourceScore(req, alloc) * r.Weight
		wsum += r.Weight
	}
	switch {
	case wsum == 0:
		return 0
	case s.roundNearest:
		return (score + wsum/2) / wsum
	}
	return score / wsum
}

// amount returns the node's allocatable amount of name and what would be
// requested with the pod placed.
func amount(ni fwk.NodeInfo, res fwk.PodResource, name v1.ResourceName, useRequested bool) (int64, int64) {
	alloc := ni.GetAllocatable()
	used := ni.GetNonZeroRequested()
	podCPU, podMem := res.Non0CPU, res.Non0Mem
	if useRequested {
		used = ni.GetRequested()
		podCPU, podMem = res.Resource.GetMilliCPU(), res.Resource.GetMemory()
	}
	switch name {
	case v1.ResourceCPU:
		return alloc.GetMilliCPU(), used.GetMilliCPU() + podCPU
	case v1.ResourceMemory:
		return alloc.GetMemory(), used.GetMemory() + podMem
	case v1.ResourceEphemeralStorage:
		return alloc.GetEphemeralStorage(), ni.GetRequested().GetEphemeralStorage() + res.Resource.GetEphemeralStorage()
	}
	return alloc.GetScalarResources()[name], ni.GetRequested().GetScalarResources()[name] + res.Resource.GetScalarResources()[name]
}

func leastAllocated(requested, allocatable int64) int64 {
	if requested > allocatable {
		return 0
	}
	return (allocatable - requested) * fwk.MaxScore / allocatable
}

func mostAllocated(requested, allocatable int64) int64 {
	return min(requested, allocatable) * fwk.MaxScore / allocatable
}

// requestedToCapacityRatio scores utilization through a piecewise linear
// shape whose scores (0-10) scale to 0-100.
func requestedToCapacityRatio(shape []configv1.UtilizationShapePoint) func(requested, allocatable int64) int64 {
	pts := make([][2]int64, len(shape))
	for i, p := range shape {
		pts[i] = [2]int64{int64(p.Utilization), int64(p.Score) * fwk.MaxScore / 10}
	}
	return func(requested, allocatable int64) int64 {
		u := requested * 100 / allocatable
		if requested > allocatable {
			u = 100
		}
		if u <= pts[0][0] {
			return pts[0][1]
		}
		for i := 1; i < len(pts); i++ {
			if u <= pts[i][0] {
				return pts[i-1][1] + (pts[i][1]-pts[i-1][1])*(u-pts[i-1][0])/(pts[i][0]-pts[i-1][0])
			}
		}
		return pts[len(pts)-1][1]
	}
}
