package resourcequota

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"
	quota "k8s.io/apiserver/pkg/quota/v1"
	"k8s.io/apiserver/pkg/quota/v1/generic"
)

var everything = labels.Everything()

// evaluator is the part every typed evaluator shares: which quota names it
// answers for, how it measures one object, and which operations matter.
// Each kind fills in the functions.
type evaluator struct {
	gr schema.GroupResource
	// names are the fixed resource names this kind is measured in.
	names []corev1.ResourceName
	// prefixed reports other names it answers for (hugepages, extended
	// resources, per-class storage).
	prefixed func(corev1.ResourceName) bool
	list     generic.ListFuncByNamespace
	usage    func(runtime.Object) (corev1.ResourceList, error)
	// handles reports whether an operation can change the usage.
	handles func(admission.Attributes) bool
	// scope reports whether an object is in a quota scope; nil means the
	// kind has no scopes.
	scope func(corev1.ScopedResourceSelectorRequirement, runtime.Object) (bool, error)
	// constraints checks that an object names every resource a quota
	// requires of it.
	constraints func(required []corev1.ResourceName, obj runtime.Object) error
}

var _ quota.Evaluator = (*evaluator)(nil)

// Constraints implements quota.Evaluator.
func (e *evaluator) Constraints(required []corev1.ResourceName, item runtime.Object) error {
	if e.constraints == nil {
		return nil
	}
	return e.constraints(required, item)
}

// GroupResource implements quota.Evaluator.
func (e *evaluator) GroupResource() schema.GroupResource { return e.gr }

// Handles implements quota.Evaluator.
func (e *evaluator) Handles(a admission.Attributes) bool { return e.handles(a) }

// Matches implements quota.Evaluator.
func (e *evaluator) Matches(q *corev1.ResourceQuota, item runtime.Object) (bool, error) {
	return generic.Matches(q, item, e.MatchingResources, e.scopeFunc())
}

func (e *evaluator) scopeFunc() generic.MatchesScopeFunc {
	if e.scope == nil {
		return generic.MatchesNoScopeFunc
	}
	return e.scope
}

// MatchingScopes implements quota.Evaluator.
func (e *evaluator) MatchingScopes(item runtime.Object, scopes []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	var out []corev1.ScopedResourceSelectorRequirement
	for _, s := range scopes {
		ok, err := e.scopeFunc()(s, item)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// UncoveredQuotaScopes implements quota.Evaluator: the limited scopes no
// matched quota covers.
func (e *evaluator) UncoveredQuotaScopes(limited, matched []corev1.ScopedResourceSelectorRequirement) ([]corev1.ScopedResourceSelectorRequirement, error) {
	var out []corev1.ScopedResourceSelectorRequirement
	for _, l := range limited {
		covered := false
		for _, m := range matched {
			if l.ScopeName == m.ScopeName && l.Operator == m.Operator && sets.New(l.Values...).IsSuperset(sets.New(m.Values...)) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, l)
		}
	}
	return out, nil
}

// MatchingResources implements quota.Evaluator.
func (e *evaluator) MatchingResources(input []corev1.ResourceName) []corev1.ResourceName {
	fixed := sets.New(e.names...)
	var out []corev1.ResourceName
	for _, n := range input {
		if fixed.Has(n) || (e.prefixed != nil && e.prefixed(n)) {
			out = append(out, n)
		}
	}
	return out
}

// Usage implements quota.Evaluator.
func (e *evaluator) Usage(item runtime.Object) (corev1.ResourceList, error) { return e.usage(item) }

// UsageStats implements quota.Evaluator: the summed usage of every object
// of the namespace that the options' scopes select.
func (e *evaluator) UsageStats(opts quota.UsageStatsOptions) (quota.UsageStats, error) {
	stats := quota.UsageStats{Used: corev1.ResourceList{}}
	for _, r := range opts.Resources {
		stats.Used[r] = zero()
	}
	items, err := e.list(opts.Namespace)
	if err != nil {
		return stats, err
	}
	var selectors []corev1.ScopedResourceSelectorRequirement
	for _, s := range opts.Scopes {
		selectors = append(selectors, corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists})
	}
	if opts.ScopeSelector != nil {
		selectors = append(selectors, opts.ScopeSelector.MatchExpressions...)
	}
	for _, item := range items {
		in := true
		for _, s := range selectors {
			ok, err := e.scopeFunc()(s, item)
			if err != nil {
				return stats, err
			}
			in = in && ok
		}
		if !in {
			continue
		}
		used, err := e.usage(item)
		if err != nil {
			return stats, err
		}
		stats.Used = quota.Add(stats.Used, quota.Mask(used, opts.Resources))
	}
	return stats, nil
}
