package kubescheduler

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// Validate reports every invalid field of a defaulted cfg, each error
// naming its field path as kube-scheduler does.
func Validate(cfg *configv1.KubeSchedulerConfiguration) field.ErrorList {
	var errs field.ErrorList
	if cfg.Parallelism == nil || *cfg.Parallelism <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("parallelism"), deref(cfg.Parallelism), "should be an integer value greater than zero"))
	}
	errs = append(errs, validatePercentage(field.NewPath("percentageOfNodesToScore"), cfg.PercentageOfNodesToScore)...)
	if cfg.PodInitialBackoffSeconds == nil || *cfg.PodInitialBackoffSeconds <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("podInitialBackoffSeconds"), deref64(cfg.PodInitialBackoffSeconds), "must be greater than 0"))
	}
	if cfg.PodMaxBackoffSeconds == nil || cfg.PodInitialBackoffSeconds == nil || *cfg.PodMaxBackoffSeconds < *cfg.PodInitialBackoffSeconds {
		errs = append(errs, field.Invalid(field.NewPath("podMaxBackoffSeconds"), deref64(cfg.PodMaxBackoffSeconds), "must be greater than or equal to PodInitialBackoffSeconds"))
	}
	errs = append(errs, validateClientConnection(cfg)...)
	errs = append(errs, validateLeaderElection(cfg)...)

	profilesPath := field.NewPath("profiles")
	if len(cfg.Profiles) == 0 {
		errs = append(errs, field.Required(profilesPath, ""))
	}
	names := sets.New[string]()
	var queueSort []configv1.Plugin
	for i := range cfg.Profiles {
		p := &cfg.Profiles[i]
		path := profilesPath.Index(i)
		name := ""
		if p.SchedulerName != nil {
			name = *p.SchedulerName
		}
		if name == "" {
			errs = append(errs, field.Required(path.Child("schedulerName"), ""))
		} else if names.Has(name) {
			errs = append(errs, field.Duplicate(path.Child("schedulerName"), name))
		}
		names.Insert(name)
		errs = append(errs, validatePercentage(path.Child("percentageOfNodesToScore"), p.PercentageOfNodesToScore)...)
		if p.Plugins != nil {
			errs = append(errs, validatePlugins(path.Child("plugins"), p.Plugins)...)
			// Every profile shares one queue, so they must sort it alike.
			qs := p.Plugins.QueueSort.Enabled
			if len(qs) == 0 {
				qs = queueSortOf(p.Plugins.MultiPoint.Enabled)
			}
			if i == 0 {
				queueSort = qs
			} else if !samePlugins(queueSort, qs) {
				errs = append(errs, field.Invalid(path.Child("plugins", "queueSort"), qs, "queueSort must be the same for all profiles"))
			}
		}
		errs = append(errs, validatePluginConfig(path.Child("pluginConfig"), p.PluginConfig)...)
	}
	for i, e := range cfg.Extenders {
		path := field.NewPath("extenders").Index(i)
		if e.URLPrefix == "" {
			errs = append(errs, field.Required(path.Child("urlPrefix"), ""))
		}
		if e.PrioritizeVerb != "" && e.Weight <= 0 {
			errs = append(errs, field.Invalid(path.Child("weight"), e.Weight, "must have a positive weight applied to it"))
		}
	}
	return errs
}

func queueSortOf(multiPoint []configv1.Plugin) []configv1.Plugin {
	for _, p := range multiPoint {
		if p.Name == PrioritySort {
			return []configv1.Plugin{p}
		}
	}
	return nil
}

func samePlugins(a, b []configv1.Plugin) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}

func validatePercentage(path *field.Path, v *int32) field.ErrorList {
	if v != nil && (*v < 0 || *v > 100) {
		return field.ErrorList{field.Invalid(path, *v, "not in valid range [0-100]")}
	}
	return nil
}

func validateClientConnection(cfg *configv1.KubeSchedulerConfiguration) field.ErrorList {
	var errs field.ErrorList
	cc := cfg.ClientConnection
	path := field.NewPath("clientConnection")
	if cc.QPS < 0 {
		errs = append(errs, field.Invalid(path.Child("qps"), cc.QPS, "must be non-negative"))
	}
	if cc.Burst < 0 {
		errs = append(errs, field.Invalid(path.Child("burst"), cc.Burst, "must be non-negative"))
	}
	return errs
}

func validateLeaderElection(cfg *configv1.KubeSchedulerConfiguration) field.ErrorList {
	le := cfg.LeaderElection
	if le.LeaderElect == nil || !*le.LeaderElect {
		return nil
	}
	var errs field.ErrorList
	path := field.NewPath("leaderElection")
	if le.LeaseDuration.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("leaseDuration"), le.LeaseDuration, "must be greater than zero"))
	}
	if le.RenewDeadline.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("renewDeadline"), le.RenewDeadline, "must be greater than zero"))
	}
	if le.RetryPeriod.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("retryPeriod"), le.RetryPeriod, "must be greater than zero"))
	}
	if le.LeaseDuration.Duration <= le.RenewDeadline.Duration {
		errs = append(errs, field.Invalid(path.Child("leaseDuration"), le.LeaseDuration, "LeaseDuration must be greater than RenewDeadline"))
	}
	if le.ResourceLock != "leases" {
		errs = append(errs, field.NotSupported(path.Child("resourceLock"), le.ResourceLock, []string{"leases"}))
	}
	if le.ResourceName == "" {
		errs = append(errs, field.Required(path.Child("resourceName"), ""))
	}
	if le.ResourceNamespace == "" {
		errs = append(errs, field.Required(path.Child("resourceNamespace"), ""))
	}
	return errs
}

func validatePlugins(path *field.Path, p *configv1.Plugins) field.ErrorList {
	var errs field.ErrorList
	for _, set := range PluginSets(p) {
		setPath := path.Child(set.Name, "enabled")
		seen := sets.New[string]()
		for i, pl := range set.Set.Enabled {
			if pl.Name == "" {
				errs = append(errs, field.Required(setPath.Index(i).Child("name"), ""))
				continue
			}
			if seen.Has(pl.Name) {
				errs = append(errs, field.Duplicate(setPath.Index(i).Child("name"), pl.Name))
			}
			seen.Insert(pl.Name)
			if pl.Weight != nil && (set.Name == "score" || set.Name == "multiPoint") {
				if *pl.Weight < 0 || *pl.Weight > MaxWeight {
					errs = append(errs, field.Invalid(setPath.Index(i).Child("weight"), *pl.Weight, fmt.Sprintf("must be in the range [0, %d]", MaxWeight)))
				}
			}
		}
	}
	if n := len(p.QueueSort.Enabled); n > 1 {
		errs = append(errs, field.Invalid(path.Child("queueSort", "enabled"), n, "only one queue sort plugin can be enabled"))
	}
	return errs
}

func validatePluginConfig(path *field.Path, pcs []configv1.PluginConfig) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, pc := range pcs {
		p := path.Index(i)
		if seen.Has(pc.Name) {
			errs = append(errs, field.Duplicate(p, pc.Name))
		}
		seen.Insert(pc.Name)
		if pc.Args.Object != nil {
			errs = append(errs, ValidateArgs(p.Child("args"), pc.Args.Object)...)
		}
	}
	return errs
}

var supportedStrategies = []string{string(configv1.LeastAllocated), string(configv1.MostAllocated), string(configv1.RequestedToCapacityRatio)}

// ValidateArgs validates one plugin's defaulted args object at path.
func ValidateArgs(path *field.Path, obj any) field.ErrorList {
	var errs field.ErrorList
	switch a := obj.(type) {
	case *configv1.DefaultPreemptionArgs:
		errs = append(errs, validatePercentage(path.Child("minCandidateNodesPercentage"), a.MinCandidateNodesPercentage)...)
		if a.MinCandidateNodesAbsolute != nil && *a.MinCandidateNodesAbsolute < 0 {
			errs = append(errs, field.Invalid(path.Child("minCandidateNodesAbsolute"), *a.MinCandidateNodesAbsolute, "not in valid range [0, inf)"))
		}
		if deref(a.MinCandidateNodesPercentage) == 0 && deref(a.MinCandidateNodesAbsolute) == 0 {
			errs = append(errs, field.Invalid(path.Child("minCandidateNodesPercentage"), 0, "cannot be zero at the same time as minCandidateNodesAbsolute"))
		}
	case *configv1.InterPodAffinityArgs:
		if w := deref(a.HardPodAffinityWeight); w < 0 || w > 100 {
			errs = append(errs, field.Invalid(path.Child("hardPodAffinityWeight"), w, "not in valid range [0-100]"))
		}
	case *configv1.NodeResourcesFitArgs:
		errs = append(errs, validateFitArgs(path, a)...)
	case *configv1.NodeResourcesBalancedAllocationArgs:
		errs = append(errs, validateResources(path.Child("resources"), a.Resources, 1, 1)...)
	case *configv1.PodTopologySpreadArgs:
		errs = append(errs, validateSpreadArgs(path, a)...)
	case *configv1.VolumeBindingArgs:
		if a.BindTimeoutSeconds != nil && *a.BindTimeoutSeconds < 0 {
			errs = append(errs, field.Invalid(path.Child("bindTimeoutSeconds"), *a.BindTimeoutSeconds, "invalid BindTimeoutSeconds, should not be a negative value"))
		}
		errs = append(errs, validateShape(path.Child("shape"), a.Shape)...)
	case *configv1.NodeAffinityArgs:
		if a.AddedAffinity != nil && a.AddedAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil &&
			len(a.AddedAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) == 0 {
			errs = append(errs, field.Required(path.Child("addedAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"), "must have at least one node selector term"))
		}
	case *configv1.DynamicResourcesArgs:
		if a.FilterTimeout != nil && a.FilterTimeout.Duration < 0 {
			errs = append(errs, field.Invalid(path.Child("filterTimeout"), a.FilterTimeout, "must be zero or positive"))
		}
		if a.BindingTimeout != nil && a.BindingTimeout.Duration <= 0 {
			errs = append(errs, field.Invalid(path.Child("bindingTimeout"), a.BindingTimeout, "must be positive"))
		}
	}
	return errs
}

func validateFitArgs(path *field.Path, a *configv1.NodeResourcesFitArgs) field.ErrorList {
	var errs field.ErrorList
	s := a.ScoringStrategy
	if s == nil {
		return nil
	}
	sp := path.Child("scoringStrategy")
	switch s.Type {
	case configv1.LeastAllocated, configv1.MostAllocated:
	case configv1.RequestedToCapacityRatio:
		if s.RequestedToCapacityRatio == nil {
			errs = append(errs, field.Required(sp.Child("requestedToCapacityRatio"), "must be set for RequestedToCapacityRatio"))
		} else {
			errs = append(errs, validateShape(sp.Child("requestedToCapacityRatio", "shape"), s.RequestedToCapacityRatio.Shape)...)
			if len(s.RequestedToCapacityRatio.Shape) == 0 {
				errs = append(errs, field.Required(sp.Child("requestedToCapacityRatio", "shape"), "at least one point must be specified"))
			}
		}
	default:
		errs = append(errs, field.NotSupported(sp.Child("type"), s.Type, supportedStrategies))
	}
	errs = append(errs, validateResources(sp.Child("resources"), s.Resources, 1, 100)...)
	return errs
}

func validateResources(path *field.Path, rs []configv1.ResourceSpec, minW, maxW int64) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, r := range rs {
		if r.Weight < minW || r.Weight > maxW {
			errs = append(errs, field.Invalid(path.Index(i).Child("weight"), r.Weight, fmt.Sprintf("resource weight of %s not in valid range [%d, %d]", r.Name, minW, maxW)))
		}
		if seen.Has(r.Name) {
			errs = append(errs, field.Duplicate(path.Index(i).Child("name"), r.Name))
		}
		seen.Insert(r.Name)
	}
	return errs
}

func validateShape(path *field.Path, shape []configv1.UtilizationShapePoint) field.ErrorList {
	var errs field.ErrorList
	for i, p := range shape {
		if p.Utilization < 0 || p.Utilization > 100 {
			errs = append(errs, field.Invalid(path.Index(i).Child("utilization"), p.Utilization, "not in valid range [0, 100]"))
		} else if i > 0 && p.Utilization <= shape[i-1].Utilization {
			errs = append(errs, field.Invalid(path.Index(i).Child("utilization"), p.Utilization, "utilization values must be sorted in increasing order"))
		}
		if p.Score < 0 || p.Score > 10 {
			errs = append(errs, field.Invalid(path.Index(i).Child("score"), p.Score, "not in valid range [0, 10]"))
		}
	}
	return errs
}

func validateSpreadArgs(path *field.Path, a *configv1.PodTopologySpreadArgs) field.ErrorList {
	var errs field.ErrorList
	switch a.DefaultingType {
	case configv1.SystemDefaulting:
		if len(a.DefaultConstraints) > 0 {
			errs = append(errs, field.Invalid(path.Child("defaultConstraints"), len(a.DefaultConstraints), "when .defaultingType is \"System\", .defaultConstraints must be empty"))
		}
	case configv1.ListDefaulting:
	default:
		errs = append(errs, field.NotSupported(path.Child("defaultingType"), a.DefaultingType, []string{string(configv1.SystemDefaulting), string(configv1.ListDefaulting)}))
	}
	keys := sets.New[string]()
	for i, c := range a.DefaultConstraints {
		p := path.Child("defaultConstraints").Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "must be greater than zero"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		}
		if c.WhenUnsatisfiable != v1.DoNotSchedule && c.WhenUnsatisfiable != v1.ScheduleAnyway {
			errs = append(errs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, []string{string(v1.DoNotSchedule), string(v1.ScheduleAnyway)}))
		}
		key := c.TopologyKey + "/" + string(c.WhenUnsatisfiable)
		if keys.Has(key) {
			errs = append(errs, field.Duplicate(p, key))
		}
		keys.Insert(key)
		if c.LabelSelector != nil {
			errs = append(errs, field.Forbidden(p.Child("labelSelector"), "constraint must not define a selector, as they deduced for each pod"))
		}
	}
	return errs
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func deref64(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
