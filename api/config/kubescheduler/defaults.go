package kubescheduler

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	componentbaseconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"
)

// Upstream's well-known values.
const (
	// DefaultSchedulerName is the profile pods get when spec.schedulerName
	// is empty.
	DefaultSchedulerName = v1.DefaultSchedulerName
	// DefaultParallelism is how many nodes are filtered or scored at once.
	DefaultParallelism = 16
	// DefaultPercentageOfNodesToScore of 0 means adaptive: 50% of the nodes
	// less 1% per 125 nodes, never below MinFeasibleNodesPercentageToFind.
	DefaultPercentageOfNodesToScore = 0
	// MaxWeight bounds a score plugin's weight so that the weighted sum of
	// every plugin's score fits an int64.
	MaxWeight = 100 * 1000 * 1000 * 1000 / 100
	// MaxTotalScore bounds the sum of every plugin's weighted score.
	MaxTotalScore int64 = 1<<63 - 1
)

// Plugin names upstream defines. A configuration may name any of them.
const (
	PrioritySort                    = "PrioritySort"
	SchedulingGates                 = "SchedulingGates"
	NodeUnschedulable               = "NodeUnschedulable"
	NodeName                        = "NodeName"
	TaintToleration                 = "TaintToleration"
	NodeAffinity                    = "NodeAffinity"
	NodePorts                       = "NodePorts"
	NodeResourcesFit                = "NodeResourcesFit"
	VolumeRestrictions              = "VolumeRestrictions"
	NodeVolumeLimits                = "NodeVolumeLimits"
	VolumeBinding                   = "VolumeBinding"
	VolumeZone                      = "VolumeZone"
	PodTopologySpread               = "PodTopologySpread"
	InterPodAffinity                = "InterPodAffinity"
	DynamicResources                = "DynamicResources"
	DefaultPreemption               = "DefaultPreemption"
	NodeResourcesBalancedAllocation = "NodeResourcesBalancedAllocation"
	ImageLocality                   = "ImageLocality"
	NodeDeclaredFeatures            = "NodeDeclaredFeatures"
	DefaultBinder                   = "DefaultBinder"
	GangScheduling                  = "GangScheduling"
)

// KnownPlugins are upstream's in-tree plugin names.
var KnownPlugins = []string{
	PrioritySort, SchedulingGates, NodeUnschedulable, NodeName, TaintToleration, NodeAffinity,
	NodePorts, NodeResourcesFit, VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone,
	PodTopologySpread, InterPodAffinity, DynamicResources, DefaultPreemption,
	NodeResourcesBalancedAllocation, ImageLocality, NodeDeclaredFeatures, DefaultBinder, GangScheduling,
}

// DefaultPlugins is upstream's default multiPoint set, in upstream's order
// and with its score weights: TaintToleration 3; NodeAffinity,
// PodTopologySpread and InterPodAffinity 2; the other scorers 1.
func DefaultPlugins() *configv1.Plugins {
	w := func(name string, weight int32) configv1.Plugin {
		return configv1.Plugin{Name: name, Weight: ptr.To(weight)}
	}
	n := func(name string) configv1.Plugin { return configv1.Plugin{Name: name} }
	return &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{
			n(SchedulingGates),
			n(PrioritySort),
			n(NodeUnschedulable),
			n(NodeName),
			w(TaintToleration, 3),
			w(NodeAffinity, 2),
			n(NodePorts),
			w(NodeResourcesFit, 1),
			n(VolumeRestrictions),
			n(NodeVolumeLimits),
			n(VolumeBinding),
			n(VolumeZone),
			w(PodTopologySpread, 2),
			w(InterPodAffinity, 2),
			n(DynamicResources),
			n(DefaultPreemption),
			w(NodeResourcesBalancedAllocation, 1),
			w(ImageLocality, 1),
			n(NodeDeclaredFeatures),
			n(DefaultBinder),
		}},
	}
}

// SetDefaults fills every unset field of cfg with upstream's default.
func SetDefaults(cfg *configv1.KubeSchedulerConfiguration) {
	if cfg.Parallelism == nil {
		cfg.Parallelism = ptr.To[int32](DefaultParallelism)
	}
	if cfg.PercentageOfNodesToScore == nil {
		cfg.PercentageOfNodesToScore = ptr.To[int32](DefaultPercentageOfNodesToScore)
	}
	if cfg.PodInitialBackoffSeconds == nil {
		cfg.PodInitialBackoffSeconds = ptr.To[int64](1)
	}
	if cfg.PodMaxBackoffSeconds == nil {
		cfg.PodMaxBackoffSeconds = ptr.To[int64](10)
	}
	if len(cfg.Profiles) == 0 {
		cfg.Profiles = []configv1.KubeSchedulerProfile{{}}
	}
	for i := range cfg.Profiles {
		setProfileDefaults(&cfg.Profiles[i])
	}

	cc := &cfg.ClientConnection
	if cc.ContentType == "" {
		cc.ContentType = "application/vnd.kubernetes.protobuf"
	}
	if cc.QPS == 0 {
		cc.QPS = 50
	}
	if cc.Burst == 0 {
		cc.Burst = 100
	}

	le := &cfg.LeaderElection
	if le.LeaderElect == nil {
		le.LeaderElect = ptr.To(true)
	}
	if le.LeaseDuration.Duration == 0 {
		le.LeaseDuration = metav1.Duration{Duration: 15 * time.Second}
	}
	if le.RenewDeadline.Duration == 0 {
		le.RenewDeadline = metav1.Duration{Duration: 10 * time.Second}
	}
	if le.RetryPeriod.Duration == 0 {
		le.RetryPeriod = metav1.Duration{Duration: 2 * time.Second}
	}
	if le.ResourceLock == "" {
		le.ResourceLock = "leases"
	}
	if le.ResourceName == "" {
		le.ResourceName = configv1.SchedulerDefaultLockObjectName
	}
	if le.ResourceNamespace == "" {
		le.ResourceNamespace = configv1.SchedulerDefaultLockObjectNamespace
	}
	setDebuggingDefaults(&cfg.DebuggingConfiguration)
}

func setDebuggingDefaults(d *componentbaseconfigv1alpha1.DebuggingConfiguration) {
	if d.EnableProfiling == nil {
		d.EnableProfiling = ptr.To(true)
	}
	if d.EnableContentionProfiling == nil {
		d.EnableContentionProfiling = ptr.To(true)
	}
}

func setProfileDefaults(p *configv1.KubeSchedulerProfile) {
	if p.SchedulerName == nil {
		p.SchedulerName = ptr.To(DefaultSchedulerName)
	}
	p.Plugins = mergePlugins(DefaultPlugins(), p.Plugins)

	// Every plugin of the profile with an args kind gets its args, defaulted,
	// as upstream does, so that the scheduler never sees nil args.
	seen := map[string]bool{}
	for i := range p.PluginConfig {
		pc := &p.PluginConfig[i]
		seen[pc.Name] = true
		if pc.Args.Object == nil && len(pc.Args.Raw) == 0 {
			pc.Args.Object = newArgs(pc.Name)
		}
		if pc.Args.Object != nil {
			setArgsDefaults(pc.Args.Object)
		}
	}
	for _, name := range enabledNames(p.Plugins) {
		if seen[name] {
			continue
		}
		if args := newArgs(name); args != nil {
			setArgsDefaults(args)
			p.PluginConfig = append(p.PluginConfig, configv1.PluginConfig{Name: name, Args: runtime.RawExtension{Object: args}})
			seen[name] = true
		}
	}
}

// enabledNames lists every plugin enabled at any extension point, once.
func enabledNames(p *configv1.Plugins) []string {
	var names []string
	seen := map[string]bool{}
	for _, set := range PluginSets(p) {
		for _, pl := range set.Set.Enabled {
			if !seen[pl.Name] {
				seen[pl.Name] = true
				names = append(names, pl.Name)
			}
		}
	}
	return names
}

// NamedPluginSet is one extension point's set with its configuration name.
type NamedPluginSet struct {
	Name string
	Set  *configv1.PluginSet
}

// PluginSets returns every extension point's set of p, named as in the
// configuration file.
func PluginSets(p *configv1.Plugins) []NamedPluginSet {
	return []NamedPluginSet{
		{"multiPoint", &p.MultiPoint},
		{"preEnqueue", &p.PreEnqueue},
		{"queueSort", &p.QueueSort},
		{"preFilter", &p.PreFilter},
		{"filter", &p.Filter},
		{"postFilter", &p.PostFilter},
		{"preScore", &p.PreScore},
		{"score", &p.Score},
		{"reserve", &p.Reserve},
		{"permit", &p.Permit},
		{"preBind", &p.PreBind},
		{"bind", &p.Bind},
		{"postBind", &p.PostBind},
		{"placementGenerate", &p.PlacementGenerate},
		{"placementScore", &p.PlacementScore},
		{"podGroupPostFilter", &p.PodGroupPostFilter},
	}
}

// mergePlugins applies custom over defaults as upstream does: per extension
// point, the default plugins not disabled (all of them gone with "*"), in
// their order, with a custom entry of the same name replacing the default
// in place, then the other custom plugins.
func mergePlugins(defaults, custom *configv1.Plugins) *configv1.Plugins {
	if custom == nil {
		return defaults
	}
	out := &configv1.Plugins{}
	outSets := PluginSets(out)
	customSets := PluginSets(custom)
	for i, d := range PluginSets(defaults) {
		*outSets[i].Set = mergePluginSet(*d.Set, *customSets[i].Set)
	}
	return out
}

func mergePluginSet(def, custom configv1.PluginSet) configv1.PluginSet {
	disabled := map[string]bool{}
	for _, p := range custom.Disabled {
		disabled[p.Name] = true
	}
	replacing := map[string]int{}
	for i, p := range custom.Enabled {
		replacing[p.Name] = i
	}
	var enabled []configv1.Plugin
	used := map[int]bool{}
	if !disabled["*"] {
		for _, p := range def.Enabled {
			if disabled[p.Name] {
				continue
			}
			if i, ok := replacing[p.Name]; ok {
				enabled = append(enabled, custom.Enabled[i])
				used[i] = true
				continue
			}
			enabled = append(enabled, p)
		}
	}
	for i, p := range custom.Enabled {
		if !used[i] {
			enabled = append(enabled, p)
		}
	}
	return configv1.PluginSet{Enabled: enabled, Disabled: custom.Disabled}
}

// newArgs returns the empty args kind of plugin name, or nil when it has
// none.
func newArgs(name string) runtime.Object {
	switch name {
	case DefaultPreemption:
		return &configv1.DefaultPreemptionArgs{}
	case InterPodAffinity:
		return &configv1.InterPodAffinityArgs{}
	case NodeResourcesFit:
		return &configv1.NodeResourcesFitArgs{}
	case NodeResourcesBalancedAllocation:
		return &configv1.NodeResourcesBalancedAllocationArgs{}
	case PodTopologySpread:
		return &configv1.PodTopologySpreadArgs{}
	case VolumeBinding:
		return &configv1.VolumeBindingArgs{}
	case NodeAffinity:
		return &configv1.NodeAffinityArgs{}
	case DynamicResources:
		return &configv1.DynamicResourcesArgs{}
	}
	return nil
}

var defaultResources = []configv1.ResourceSpec{{Name: string(v1.ResourceCPU), Weight: 1}, {Name: string(v1.ResourceMemory), Weight: 1}}

// setArgsDefaults defaults a plugin args object in place, as upstream does.
func setArgsDefaults(obj runtime.Object) {
	switch a := obj.(type) {
	case *configv1.DefaultPreemptionArgs:
		if a.MinCandidateNodesPercentage == nil {
			a.MinCandidateNodesPercentage = ptr.To[int32](10)
		}
		if a.MinCandidateNodesAbsolute == nil {
			a.MinCandidateNodesAbsolute = ptr.To[int32](100)
		}
	case *configv1.InterPodAffinityArgs:
		if a.HardPodAffinityWeight == nil {
			a.HardPodAffinityWeight = ptr.To[int32](1)
		}
	case *configv1.NodeResourcesFitArgs:
		if a.ScoringStrategy == nil {
			a.ScoringStrategy = &configv1.ScoringStrategy{Type: configv1.LeastAllocated}
		}
		if a.ScoringStrategy.Type == "" {
			a.ScoringStrategy.Type = configv1.LeastAllocated
		}
		if len(a.ScoringStrategy.Resources) == 0 {
			a.ScoringStrategy.Resources = append([]configv1.ResourceSpec(nil), defaultResources...)
		}
		for i := range a.ScoringStrategy.Resources {
			if a.ScoringStrategy.Resources[i].Weight == 0 {
				a.ScoringStrategy.Resources[i].Weight = 1
			}
		}
	case *configv1.NodeResourcesBalancedAllocationArgs:
		if len(a.Resources) == 0 {
			a.Resources = append([]configv1.ResourceSpec(nil), defaultResources...)
		}
		for i := range a.Resources {
			if a.Resources[i].Weight == 0 {
				a.Resources[i].Weight = 1
			}
		}
	case *configv1.PodTopologySpreadArgs:
		if a.DefaultingType == "" {
			a.DefaultingType = configv1.SystemDefaulting
		}
	case *configv1.VolumeBindingArgs:
		if a.BindTimeoutSeconds == nil {
			a.BindTimeoutSeconds = ptr.To[int64](600)
		}
	case *configv1.DynamicResourcesArgs:
		if a.FilterTimeout == nil {
			a.FilterTimeout = &metav1.Duration{Duration: configv1.DynamicResourcesFilterTimeoutDefault}
		}
		if a.BindingTimeout == nil {
			a.BindingTimeout = &metav1.Duration{Duration: configv1.DynamicResourcesBindingTimeoutDefault}
		}
	}
}

// SystemDefaultSpreadConstraints are PodTopologySpread's cluster-level
// constraints with defaultingType System.
var SystemDefaultSpreadConstraints = []v1.TopologySpreadConstraint{
	{TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 3},
	{TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 5},
}
