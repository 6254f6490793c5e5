// Package nodeunschedulable is the NodeUnschedulable plugin: cordoned
// nodes (spec.unschedulable) take only pods tolerating the
// node.kubernetes.io/unschedulable taint.
package nodeunschedulable

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin's name in the configuration.
const Name = "NodeUnschedulable"

// Upstream's reasons.
const (
	ErrReasonUnknownCondition = "node(s) had unknown conditions"
	ErrReasonUnschedulable    = "node(s) were unschedulable"
)

// Plugin implements fwk.FilterPlugin.
type Plugin struct{}

// New is the plugin's factory.
func New(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return Plugin{}, nil }

// Name implements fwk.Plugin.
func (Plugin) Name() string { return Name }

var unschedulableTaint = &v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}

// Filter implements fwk.FilterPlugin.
func (Plugin) Filter(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	node := ni.Node()
	if node == nil {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonUnknownCondition)
	}
	if !node.Spec.Unschedulable {
		return nil
	}
	for i := range pod.Spec.Tolerations {
		if pod.Spec.Tolerations[i].ToleratesTaint(klog.FromContext(ctx), unschedulableTaint, true) {
			return nil
		}
	}
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ErrReasonUnschedulable)
}

// EventsToRegister implements fwk.EnqueueExtensions.
func (Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeTaint}, QueueingHintFn: isSchedulableAfterNodeChange},
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.UpdatePodToleration}},
	}, nil
}

// isSchedulableAfterNodeChange is the queueing hint, as upstream's: a node
// helps when it is (now) schedulable, or the pod tolerates it not being.
func isSchedulableAfterNodeChange(logger klog.Logger, pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	node, ok := newObj.(*v1.Node)
	if !ok {
		return fwk.Queue, fmt.Errorf("expected a Node, got %T", newObj)
	}
	old, _ := oldObj.(*v1.Node)
	if old != nil && old.Spec.Unschedulable == node.Spec.Unschedulable {
		return fwk.QueueSkip, nil
	}
	if !node.Spec.Unschedulable {
		return fwk.Queue, nil
	}
	for i := range pod.Spec.Tolerations {
		if pod.Spec.Tolerations[i].ToleratesTaint(logger, unschedulableTaint, true) {
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}
