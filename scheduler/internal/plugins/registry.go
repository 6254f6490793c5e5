// Package plugins lists trireme-scheduler's in-tree plugins: the one
// registry the profiles are built from.
package plugins

import (
	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugins/defaultbinder"
	"trireme.dev/scheduler/internal/plugins/defaultpreemption"
	"trireme.dev/scheduler/internal/plugins/imagelocality"
	"trireme.dev/scheduler/internal/plugins/interpodaffinity"
	"trireme.dev/scheduler/internal/plugins/nodeaffinity"
	"trireme.dev/scheduler/internal/plugins/nodename"
	"trireme.dev/scheduler/internal/plugins/nodeports"
	"trireme.dev/scheduler/internal/plugins/noderesources"
	"trireme.dev/scheduler/internal/plugins/nodeunschedulable"
	"trireme.dev/scheduler/internal/plugins/nodevolumelimits"
	"trireme.dev/scheduler/internal/plugins/podtopologyspread"
	"trireme.dev/scheduler/internal/plugins/prioritysort"
	"trireme.dev/scheduler/internal/plugins/schedulinggates"
	"trireme.dev/scheduler/internal/plugins/tainttoleration"
	"trireme.dev/scheduler/internal/plugins/volumebinding"
	"trireme.dev/scheduler/internal/plugins/volumerestrictions"
	"trireme.dev/scheduler/internal/plugins/volumezone"
)

// Registry returns every in-tree plugin by its upstream name.
func Registry() framework.Registry {
	return framework.Registry{
		prioritysort.Name:                    prioritysort.New,
		schedulinggates.Name:                 schedulinggates.New,
		nodeunschedulable.Name:               nodeunschedulable.New,
		nodename.Name:                        nodename.New,
		tainttoleration.Name:                 tainttoleration.New,
		nodeaffinity.Name:                    nodeaffinity.New,
		nodeports.Name:                       nodeports.New,
		noderesources.FitName:                noderesources.NewFit,
		noderesources.BalancedAllocationName: noderesources.NewBalancedAllocation,
		imagelocality.Name:                   imagelocality.New,
		podtopologyspread.Name:               podtopologyspread.New,
		interpodaffinity.Name:                interpodaffinity.New,
		defaultbinder.Name:                   defaultbinder.New,
		volumerestrictions.Name:              volumerestrictions.New,
		volumebinding.Name:                   volumebinding.New,
		volumezone.Name:                      volumezone.New,
		nodevolumelimits.Name:                nodevolumelimits.New,
		defaultpreemption.Name:               defaultpreemption.New,
	}
}
