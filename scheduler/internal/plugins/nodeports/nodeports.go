// Package nodeports is the NodePorts plugin: a pod asking for host ports
// fits only nodes where those ports are free.
package nodeports

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"trireme.dev/api/hostports"
)

// Name is the plugin's name in the configuration.
const Name = "NodePorts"

// ErrReason is upstream's reason.
const ErrReason = "node(s) didn't have free ports for the requested pod ports"

const preFilterKey fwk.StateKey = "PreFilter" + Name

// Plugin implements PreFilter and Filter.
type Plugin struct{}

// New is the plugin's factory.
func New(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return Plugin{}, nil }

// Name implements fwk.Plugin.
func (Plugin) Name() string { return Name }

type preFilterState []v1.ContainerPort

func (s preFilterState) Clone() fwk.StateData { return s }

// PreFilter implements fwk.PreFilterPlugin; pods without host ports skip
// the filter.
func (Plugin) PreFilter(_ context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	ports := hostports.Of(pod)
	if len(ports) == 0 {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	state.Write(preFilterKey, preFilterState(ports))
	return nil, nil
}

// PreFilterExtensions implements fwk.PreFilterPlugin.
func (Plugin) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter implements fwk.FilterPlugin.
func (Plugin) Filter(_ context.Context, state fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	var ports []v1.ContainerPort
	if d, err := state.Read(preFilterKey); err == nil {
		ports = d.(preFilterState)
	} else {
		ports = hostports.Of(pod)
	}
	if Fits(ports, ni.GetUsedPorts()) {
		return nil
	}
	return fwk.NewStatus(fwk.Unschedulable, ErrReason)
}

// Fits reports whether none of ports is taken in used.
func Fits(ports []v1.ContainerPort, used fwk.HostPortInfo) bool {
	for _, p := range ports {
		if used.CheckConflict(p.HostIP, string(p.Protocol), p.HostPort) {
			return false
		}
	}
	return true
}

// EventsToRegister implements fwk.EnqueueExtensions.
func (Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete}, QueueingHintFn: isSchedulableAfterPodDeleted},
		// A new node holds no pods: every port is free there.
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add}},
	}, nil
}

// isSchedulableAfterPodDeleted is the queueing hint, as upstream's: only
// a deleted assigned pod that held one of the waiting pod's ports helps.
func isSchedulableAfterPodDeleted(_ klog.Logger, pod *v1.Pod, oldObj, _ any) (fwk.QueueingHint, error) {
	deleted, ok := oldObj.(*v1.Pod)
	if !ok || deleted == nil {
		return fwk.Queue, fmt.Errorf("expected a Pod, got %T", oldObj)
	}
	if deleted.Spec.NodeName == "" {
		return fwk.QueueSkip, nil
	}
	held := hostports.Of(deleted)
	if len(held) == 0 {
		return fwk.QueueSkip, nil
	}
	used := fwk.HostPortInfo{}
	for _, p := range held {
		used.Add(p.HostIP, string(p.Protocol), p.HostPort)
	}
	if Fits(hostports.Of(pod), used) {
		return fwk.QueueSkip, nil
	}
	return fwk.Queue, nil
}
