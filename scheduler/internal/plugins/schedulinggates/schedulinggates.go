// Package schedulinggates is the SchedulingGates plugin: a pod with
// spec.schedulingGates stays out of the active queue until they are all
// removed.
package schedulinggates

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin's name in the configuration.
const Name = "SchedulingGates"

// Plugin implements fwk.PreEnqueuePlugin.
type Plugin struct{}

// New is the plugin's factory.
func New(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return Plugin{}, nil }

// Name implements fwk.Plugin.
func (Plugin) Name() string { return Name }

// PreEnqueue implements fwk.PreEnqueuePlugin.
func (Plugin) PreEnqueue(_ context.Context, p *v1.Pod) *fwk.Status {
	if len(p.Spec.SchedulingGates) == 0 {
		return nil
	}
	gates := make([]string, 0, len(p.Spec.SchedulingGates))
	for _, g := range p.Spec.SchedulingGates {
		gates = append(gates, g.Name)
	}
	return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("waiting for scheduling gates: %v", gates))
}

// EventsToRegister implements fwk.EnqueueExtensions.
func (Plugin) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.UpdatePodSchedulingGatesEliminated}}}, nil
}
