// Package prioritysort is the PrioritySort plugin: the queue pops pods by
// priority, highest first, then by arrival.
package prioritysort

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
)

// Name is the plugin's name in the configuration.
const Name = "PrioritySort"

// Plugin implements fwk.QueueSortPlugin.
type Plugin struct{}

// New is the plugin's factory.
func New(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) { return Plugin{}, nil }

// Name implements fwk.Plugin.
func (Plugin) Name() string { return Name }

// Less implements fwk.QueueSortPlugin.
func (Plugin) Less(a, b fwk.QueuedEntityInfo) bool {
	pa, pb := a.GetPriority(), b.GetPriority()
	return pa > pb || (pa == pb && a.GetTimestamp().Before(b.GetTimestamp()))
}
