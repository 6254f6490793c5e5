package resourcequota

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// scopeRequirements folds a quota's spec.scopes (each an Exists
// requirement) and spec.scopeSelector into one list; an object is charged
// to the quota only when it meets all of them.
func scopeRequirements(q *corev1.ResourceQuota) []corev1.ScopedResourceSelectorRequirement {
	var reqs []corev1.ScopedResourceSelectorRequirement
	for _, s := range q.Spec.Scopes {
		reqs = append(reqs, corev1.ScopedResourceSelectorRequirement{ScopeName: s, Operator: corev1.ScopeSelectorOpExists})
	}
	if q.Spec.ScopeSelector != nil {
		reqs = append(reqs, q.Spec.ScopeSelector.MatchExpressions...)
	}
	return reqs
}

// podMatches reports whether pod meets every requirement.
func podMatches(pod *corev1.Pod, reqs []corev1.ScopedResourceSelectorRequirement) bool {
	for _, r := range reqs {
		if !podMatchesOne(pod, r) {
			return false
		}
	}
	return true
}

func podMatchesOne(pod *corev1.Pod, r corev1.ScopedResourceSelectorRequirement) bool {
	switch r.ScopeName {
	case corev1.ResourceQuotaScopeTerminating:
		return terminating(pod)
	case corev1.ResourceQuotaScopeNotTerminating:
		return !terminating(pod)
	case corev1.ResourceQuotaScopeBestEffort:
		return bestEffort(pod)
	case corev1.ResourceQuotaScopeNotBestEffort:
		return !bestEffort(pod)
	case corev1.ResourceQuotaScopePriorityClass:
		return valueMatches(pod.Spec.PriorityClassName, r)
	case corev1.ResourceQuotaScopeCrossNamespacePodAffinity:
		return crossNamespaceAffinity(pod)
	}
	// Scopes of other kinds (VolumeAttributesClass) never match a pod.
	return false
}

// claimMatches reports whether a PersistentVolumeClaim meets every
// requirement; only the VolumeAttributesClass scope applies to claims.
func claimMatches(pvc *corev1.PersistentVolumeClaim, reqs []corev1.ScopedResourceSelectorRequirement) bool {
	for _, r := range reqs {
		if r.ScopeName != corev1.ResourceQuotaScopeVolumeAttributesClass {
			return false
		}
		// A claim being modified is charged to the class it has and the
		// one it moves to, as upstream does.
		classes := []string{}
		if pvc.Spec.VolumeAttributesClassName != nil {
			classes = append(classes, *pvc.Spec.VolumeAttributesClassName)
		}
		if c := pvc.Status.CurrentVolumeAttributesClassName; c != nil {
			classes = append(classes, *c)
		}
		if s := pvc.Status.ModifyVolumeStatus; s != nil && s.TargetVolumeAttributesClassName != "" {
			classes = append(classes, s.TargetVolumeAttributesClassName)
		}
		if len(classes) == 0 {
			classes = []string{""}
		}
		if !slices.ContainsFunc(classes, func(c string) bool { return valueMatches(c, r) }) {
			return false
		}
	}
	return true
}

// valueMatches applies a selector requirement to a class name; an empty
// name is an absent one.
func valueMatches(value string, r corev1.ScopedResourceSelectorRequirement) bool {
	switch r.Operator {
	case corev1.ScopeSelectorOpIn:
		return slices.Contains(r.Values, value)
	case corev1.ScopeSelectorOpNotIn:
		return !slices.Contains(r.Values, value)
	case corev1.ScopeSelectorOpExists:
		return value != ""
	case corev1.ScopeSelectorOpDoesNotExist:
		return value == ""
	}
	return false
}

// terminating: a pod with an active deadline will end by itself.
func terminating(pod *corev1.Pod) bool {
	return pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds >= 0
}

// bestEffort uses the QoS class the apiserver recorded and, for pods that
// have none yet, derives it: no container asks for or caps cpu or memory.
func bestEffort(pod *corev1.Pod) bool {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass == corev1.PodQOSBestEffort
	}
	if pod.Spec.Resources != nil && computeSet(*pod.Spec.Resources) {
		return false
	}
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range list {
			if computeSet(c.Resources) {
				return false
			}
		}
	}
	return true
}

func computeSet(r corev1.ResourceRequirements) bool {
	for _, l := range []corev1.ResourceList{r.Requests, r.Limits} {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := l[name]; ok && !q.IsZero() {
				return true
			}
		}
	}
	return false
}

// crossNamespaceAffinity: a pod (anti-)affinity term that looks at other
// namespaces than the pod's own.
func crossNamespaceAffinity(pod *corev1.Pod) bool {
	a := pod.Spec.Affinity
	if a == nil {
		return false
	}
	var terms []corev1.PodAffinityTerm
	if pa := a.PodAffinity; pa != nil {
		terms = append(terms, pa.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		terms = append(terms, pa.RequiredDuringSchedulingIgnoredDuringExecution...)
		for _, w := range pa.PreferredDuringSchedulingIgnoredDuringExecution {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	return slices.ContainsFunc(terms, func(t corev1.PodAffinityTerm) bool {
		return len(t.Namespaces) > 0 || t.NamespaceSelector != nil
	})
}
