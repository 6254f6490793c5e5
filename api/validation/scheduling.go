package validation

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var taintEffects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}

// tolerations checks spec.tolerations.
func tolerations(ts []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		p := fldPath.Index(i)
		if t.Key != "" {
			errs = append(errs, metav1validation.ValidateLabelName(t.Key, p.Child("key"))...)
		}
		if t.Key == "" && t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(p.Child("operator"), t.Operator, "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(p.Child("effect"), t.Effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			errs = append(errs, labelValue(t.Value, p.Child("value"))...)
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(p.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator, []string{string(corev1.TolerationOpEqual), string(corev1.TolerationOpExists)}))
		}
		errs = append(errs, optionalEnum(t.Effect, p.Child("effect"), taintEffects...)...)
	}
	return errs
}

// taints checks node taints: unique by key and effect.
func taints(ts []corev1.Taint, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, t := range ts {
		p := fldPath.Index(i)
		errs = append(errs, metav1validation.ValidateLabelName(t.Key, p.Child("key"))...)
		if t.Value != "" {
			errs = append(errs, labelValue(t.Value, p.Child("value"))...)
		}
		errs = append(errs, enum(t.Effect, p.Child("effect"), taintEffects...)...)
		key := t.Key + "/" + string(t.Effect)
		if seen.Has(key) {
			errs = append(errs, field.Duplicate(p, "taints must be unique by key and effect pair"))
		}
		seen.Insert(key)
	}
	return errs
}

// nodeSelectorRequirement checks one node label requirement.
func nodeSelectorRequirement(r corev1.NodeSelectorRequirement, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(r.Values) == 0 {
			errs = append(errs, field.Required(fldPath.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
		}
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		if len(r.Values) > 0 {
			errs = append(errs, field.Forbidden(fldPath.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
		}
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(fldPath.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"))
		} else if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil {
			errs = append(errs, field.Invalid(fldPath.Child("values").Index(0), r.Values[0], "must be an integer"))
		}
	default:
		errs = append(errs, field.Invalid(fldPath.Child("operator"), r.Operator, "not a valid selector operator"))
	}
	errs = append(errs, metav1validation.ValidateLabelName(r.Key, fldPath.Child("key"))...)
	return errs
}

// nodeFieldSelectorRequirement checks a matchFields entry; only
// metadata.name can be selected, by one value.
func nodeFieldSelectorRequirement(r corev1.NodeSelectorRequirement, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch r.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		if len(r.Values) != 1 {
			errs = append(errs, field.Required(fldPath.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
		}
	default:
		errs = append(errs, field.Invalid(fldPath.Child("operator"), r.Operator, "not a valid selector operator"))
	}
	if r.Key != "metadata.name" {
		errs = append(errs, field.NotSupported(fldPath.Child("key"), r.Key, []string{"metadata.name"}))
	}
	return errs
}

func nodeSelectorTerm(t corev1.NodeSelectorTerm, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range t.MatchExpressions {
		errs = append(errs, nodeSelectorRequirement(r, fldPath.Child("matchExpressions").Index(i))...)
	}
	for i, r := range t.MatchFields {
		errs = append(errs, nodeFieldSelectorRequirement(r, fldPath.Child("matchFields").Index(i))...)
	}
	return errs
}

// nodeSelector checks a required node selector: at least one term.
func nodeSelector(s *corev1.NodeSelector, fldPath *field.Path) field.ErrorList {
	terms := fldPath.Child("nodeSelectorTerms")
	if len(s.NodeSelectorTerms) == 0 {
		return field.ErrorList{field.Required(terms, "must have at least one node selector term")}
	}
	var errs field.ErrorList
	for i, t := range s.NodeSelectorTerms {
		errs = append(errs, nodeSelectorTerm(t, terms.Index(i))...)
	}
	return errs
}

func weight(w int32, fldPath *field.Path) field.ErrorList {
	if w <= 0 || w > 100 {
		return field.ErrorList{field.Invalid(fldPath, w, "must be in the range 1-100")}
	}
	return nil
}

func affinity(a *corev1.Affinity, fldPath *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		p := fldPath.Child("nodeAffinity")
		if na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			errs = append(errs, nodeSelector(na.RequiredDuringSchedulingIgnoredDuringExecution, p.Child("requiredDuringSchedulingIgnoredDuringExecution"))...)
		}
		for i, t := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			tp := p.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, weight(t.Weight, tp.Child("weight"))...)
			errs = append(errs, nodeSelectorTerm(t.Preference, tp.Child("preference"))...)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		errs = append(errs, podAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, fldPath.Child("podAffinity"))...)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		errs = append(errs, podAffinityTerms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution, fldPath.Child("podAntiAffinity"))...)
	}
	return errs
}

func podAffinityTerms(required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range required {
		errs = append(errs, podAffinityTerm(t, fldPath.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
	}
	for i, t := range preferred {
		p := fldPath.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		errs = append(errs, weight(t.Weight, p.Child("weight"))...)
		errs = append(errs, podAffinityTerm(t.PodAffinityTerm, p.Child("podAffinityTerm"))...)
	}
	return errs
}

func podAffinityTerm(t corev1.PodAffinityTerm, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, labelSelector(t.LabelSelector, fldPath.Child("labelSelector"))...)
	errs = append(errs, labelSelector(t.NamespaceSelector, fldPath.Child("namespaceSelector"))...)
	for i, ns := range t.Namespaces {
		errs = append(errs, dns1123Label(ns, fldPath.Child("namespaces").Index(i))...)
	}
	if t.TopologyKey == "" {
		errs = append(errs, field.Required(fldPath.Child("topologyKey"), "can not be empty"))
	} else {
		errs = append(errs, metav1validation.ValidateLabelName(t.TopologyKey, fldPath.Child("topologyKey"))...)
	}
	errs = append(errs, labelKeys(t.MatchLabelKeys, t.MismatchLabelKeys, fldPath)...)
	return errs
}

// labelKeys checks matchLabelKeys and mismatchLabelKeys: label names,
// disjoint, and only used together with a labelSelector.
func labelKeys(match, mismatch []string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	matchSet := sets.New[string]()
	for i, k := range match {
		errs = append(errs, metav1validation.ValidateLabelName(k, fldPath.Child("matchLabelKeys").Index(i))...)
		matchSet.Insert(k)
	}
	for i, k := range mismatch {
		p := fldPath.Child("mismatchLabelKeys").Index(i)
		errs = append(errs, metav1validation.ValidateLabelName(k, p)...)
		if matchSet.Has(k) {
			errs = append(errs, field.Invalid(p, k, "exists in both matchLabelKeys and mismatchLabelKeys"))
		}
	}
	return errs
}

var unsatisfiableActions = []corev1.UnsatisfiableConstraintAction{corev1.DoNotSchedule, corev1.ScheduleAnyway}
var inclusionPolicies = []corev1.NodeInclusionPolicy{corev1.NodeInclusionPolicyHonor, corev1.NodeInclusionPolicyIgnore}

func topologySpreadConstraints(cs []corev1.TopologySpreadConstraint, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, c := range cs {
		p := fldPath.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, isNotPositiveErrorMsg))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "can not be empty"))
		} else {
			errs = append(errs, metav1validation.ValidateLabelName(c.TopologyKey, p.Child("topologyKey"))...)
		}
		errs = append(errs, enum(c.WhenUnsatisfiable, p.Child("whenUnsatisfiable"), unsatisfiableActions...)...)
		key := fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)
		if seen.Has(key) {
			errs = append(errs, field.Duplicate(p, key))
		}
		seen.Insert(key)
		if c.MinDomains != nil {
			if *c.MinDomains <= 0 {
				errs = append(errs, field.Invalid(p.Child("minDomains"), *c.MinDomains, isNotPositiveErrorMsg))
			}
			if c.WhenUnsatisfiable != corev1.DoNotSchedule {
				errs = append(errs, field.Invalid(p.Child("minDomains"), *c.MinDomains, fmt.Sprintf("can only use minDomains if whenUnsatisfiable=%s, not %s", corev1.DoNotSchedule, c.WhenUnsatisfiable)))
			}
		}
		if c.NodeAffinityPolicy != nil {
			errs = append(errs, enum(*c.NodeAffinityPolicy, p.Child("nodeAffinityPolicy"), inclusionPolicies...)...)
		}
		if c.NodeTaintsPolicy != nil {
			errs = append(errs, enum(*c.NodeTaintsPolicy, p.Child("nodeTaintsPolicy"), inclusionPolicies...)...)
		}
		errs = append(errs, labelSelector(c.LabelSelector, p.Child("labelSelector"))...)
		for j, k := range c.MatchLabelKeys {
			errs = append(errs, metav1validation.ValidateLabelName(k, p.Child("matchLabelKeys").Index(j))...)
		}
	}
	return errs
}
