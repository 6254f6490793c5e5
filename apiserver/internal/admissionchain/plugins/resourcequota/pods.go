package resourcequota

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/quota/v1/generic"
	resourcehelper "k8s.io/component-helpers/resource"
)

func zero() resource.Quantity { return resource.MustParse("0") }

// Quota names for pod compute resources; the bare names are the legacy
// spelling of requests.*.
var (
	podCount        = generic.ObjectCountQuotaResourceNameFor(corev1.Resource("pods"))
	podComputeNames = []corev1.ResourceName{
		corev1.ResourcePods, podCount,
		corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage,
		corev1.ResourceRequestsCPU, corev1.ResourceRequestsMemory, corev1.ResourceRequestsEphemeralStorage,
		corev1.ResourceLimitsCPU, corev1.ResourceLimitsMemory, corev1.ResourceLimitsEphemeralStorage,
	}
	// requestNames map the names a quota may require of every container's
	// requests or limits to the container resource they are about.
	requestNames = map[corev1.ResourceName]corev1.ResourceName{
		corev1.ResourceCPU: corev1.ResourceCPU, corev1.ResourceRequestsCPU: corev1.ResourceCPU,
		corev1.ResourceMemory: corev1.ResourceMemory, corev1.ResourceRequestsMemory: corev1.ResourceMemory,
		corev1.ResourceEphemeralStorage: corev1.ResourceEphemeralStorage, corev1.ResourceRequestsEphemeralStorage: corev1.ResourceEphemeralStorage,
	}
	limitNames = map[corev1.ResourceName]corev1.ResourceName{
		corev1.ResourceLimitsCPU:              corev1.ResourceCPU,
		corev1.ResourceLimitsMemory:           corev1.ResourceMemory,
		corev1.ResourceLimitsEphemeralStorage: corev1.ResourceEphemeralStorage,
	}
)

func newPodEvaluator(list generic.ListFuncByNamespace) *evaluator {
	return &evaluator{
		gr:    corev1.Resource("pods"),
		names: podComputeNames,
		prefixed: func(n corev1.ResourceName) bool {
			s := string(n)
			return strings.HasPrefix(s, corev1.ResourceHugePagesPrefix) || strings.HasPrefix(s, corev1.ResourceRequestsHugePagesPrefix) ||
				strings.HasPrefix(s, corev1.DefaultResourceRequestsPrefix)
		},
		list:  list,
		usage: podUsage,
		handles: func(a admission.Attributes) bool {
			// A pod's resources change only when it is made or resized.
			return (a.GetOperation() == admission.Create && a.GetSubresource() == "") ||
				(a.GetOperation() == admission.Update && a.GetSubresource() == "resize")
		},
		scope:       podScope,
		constraints: podConstraints,
	}
}

// terminal pods no longer hold their resources.
func terminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func podUsage(obj runtime.Object) (corev1.ResourceList, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("unexpected object %T, want a Pod", obj)
	}
	if terminal(pod) {
		return corev1.ResourceList{}, nil
	}
	one := resource.MustParse("1")
	out := corev1.ResourceList{corev1.ResourcePods: one, podCount: one}
	requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	limits := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
	for name, q := range requests {
		switch {
		case name == corev1.ResourceCPU || name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage:
			out[name] = q
			out[corev1.ResourceName("requests."+string(name))] = q
		case strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix):
			out[name] = q
			out[corev1.ResourceName("requests."+string(name))] = q
		case !strings.Contains(string(name), "/") || strings.Contains(string(name), "kubernetes.io/"):
			// Only extended resources (domain/name) have a requests.* quota.
		default:
			out[corev1.ResourceName(corev1.DefaultResourceRequestsPrefix+string(name))] = q
		}
	}
	for name, q := range limits {
		if name == corev1.ResourceCPU || name == corev1.ResourceMemory || name == corev1.ResourceEphemeralStorage {
			out[corev1.ResourceName("limits."+string(name))] = q
		}
	}
	return out, nil
}

// podConstraints refuses a pod whose containers leave out a resource a
// quota tracks: without the request the quota could not be charged.
func podConstraints(required []corev1.ResourceName, obj runtime.Object) error {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return fmt.Errorf("unexpected object %T, want a Pod", obj)
	}
	missing := sets.New[string]()
	check := func(c *corev1.Container) {
		for _, r := range required {
			if base, ok := requestNames[r]; ok {
				if _, set := c.Resources.Requests[base]; !set {
					missing.Insert(string(r))
				}
			}
			if base, ok := limitNames[r]; ok {
				if _, set := c.Resources.Limits[base]; !set {
					missing.Insert(string(r))
				}
			}
		}
	}
	// Pod-level resources satisfy the requirement for every container.
	if pod.Spec.Resources == nil {
		for i := range pod.Spec.InitContainers {
			check(&pod.Spec.InitContainers[i])
		}
		for i := range pod.Spec.Containers {
			check(&pod.Spec.Containers[i])
		}
	}
	if missing.Len() == 0 {
		return nil
	}
	return fmt.Errorf("must specify %s", strings.Join(sets.List(missing), ","))
}

// podScope reports whether pod is in a quota scope.
func podScope(s corev1.ScopedResourceSelectorRequirement, obj runtime.Object) (bool, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return false, fmt.Errorf("unexpected object %T, want a Pod", obj)
	}
	switch s.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0, nil
	case corev1.ResourceQuotaScopeNotTerminating:
		return pod.Spec.ActiveDeadlineSeconds == nil || *pod.Spec.ActiveDeadlineSeconds < 0, nil
	case corev1.ResourceQuotaScopeBestEffort:
		return bestEffort(pod), nil
	case corev1.ResourceQuotaScopeNotBestEffort:
		return !bestEffort(pod), nil
	case corev1.ResourceQuotaScopePriorityClass:
		return selectorMatches(s, pod.Spec.PriorityClassName, pod.Spec.PriorityClassName != "")
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return crossNamespaceAffinity(pod), nil
	}
	return false, nil
}

// selectorMatches applies a scope selector's operator to value.
func selectorMatches(s corev1.ScopedResourceSelectorRequirement, value string, present bool) (bool, error) {
	switch s.Operator {
	case corev1.ScopeSelectorOpExists:
		return present, nil
	case corev1.ScopeSelectorOpDoesNotExist:
		return !present, nil
	case corev1.ScopeSelectorOpIn:
		return sets.New(s.Values...).Has(value), nil
	case corev1.ScopeSelectorOpNotIn:
		return !sets.New(s.Values...).Has(value), nil
	}
	return false, fmt.Errorf("unsupported scope selector operator %q", s.Operator)
}

func bestEffort(pod *corev1.Pod) bool {
	all := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, c := range all {
		if len(c.Resources.Requests) > 0 || len(c.Resources.Limits) > 0 {
			return false
		}
	}
	return pod.Spec.Resources == nil || (len(pod.Spec.Resources.Requests) == 0 && len(pod.Spec.Resources.Limits) == 0)
}

func crossNamespaceAffinity(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil {
		return false
	}
	var terms []corev1.PodAffinityTerm
	if a.PodAffinity != nil {
		terms = append(terms, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	if a.PodAntiAffinity != nil {
		terms = append(terms, a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	for _, t := range terms {
		if len(t.Namespaces) > 0 || t.NamespaceSelector != nil {
			return true
		}
	}
	return false
}
