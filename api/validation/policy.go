package validation

import (
	"fmt"
	"strings"

	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*policyv1.PodDisruptionBudget]{
		spec: pdbRules,
		statusChange: func(pdb, old *policyv1.PodDisruptionBudget) field.ErrorList {
			st, p := &pdb.Status, field.NewPath("status")
			var errs field.ErrorList
			errs = append(errs, nonNegative(int64(st.DisruptionsAllowed), p.Child("disruptionsAllowed"))...)
			errs = append(errs, nonNegative(int64(st.CurrentHealthy), p.Child("currentHealthy"))...)
			errs = append(errs, nonNegative(int64(st.DesiredHealthy), p.Child("desiredHealthy"))...)
			errs = append(errs, nonNegative(int64(st.ExpectedPods), p.Child("expectedPods"))...)
			errs = append(errs, metav1validation.ValidateConditions(st.Conditions, p.Child("conditions"))...)
			return errs
		},
	})
	register(&kind[*schedulingv1.PriorityClass]{cluster: true, spec: priorityClassRules, change: priorityClassChange})
}

var unhealthyPodEvictionPolicies = []policyv1.UnhealthyPodEvictionPolicyType{policyv1.IfHealthyBudget, policyv1.AlwaysAllow}

func pdbRules(pdb *policyv1.PodDisruptionBudget) field.ErrorList {
	var errs field.ErrorList
	spec := &pdb.Spec
	if spec.MinAvailable != nil && spec.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(specPath, spec, "minAvailable and maxUnavailable cannot be both set"))
	}
	if spec.MinAvailable != nil {
		errs = append(errs, intOrPercent(*spec.MinAvailable, specPath.Child("minAvailable"))...)
		errs = append(errs, notMoreThan100Percent(*spec.MinAvailable, specPath.Child("minAvailable"))...)
	}
	if spec.MaxUnavailable != nil {
		errs = append(errs, intOrPercent(*spec.MaxUnavailable, specPath.Child("maxUnavailable"))...)
		errs = append(errs, notMoreThan100Percent(*spec.MaxUnavailable, specPath.Child("maxUnavailable"))...)
	}
	errs = append(errs, labelSelector(spec.Selector, specPath.Child("selector"))...)
	if spec.UnhealthyPodEvictionPolicy != nil {
		errs = append(errs, enum(*spec.UnhealthyPodEvictionPolicy, specPath.Child("unhealthyPodEvictionPolicy"), unhealthyPodEvictionPolicies...)...)
	}
	return errs
}

// Priorities above this are reserved for the system classes, which the
// scheduler relies on to never be preempted by user workloads.
const (
	highestUserDefinablePriority = 1000000000
	systemPriorityClassPrefix    = "system-"
)

// systemPriorityClasses are the only classes allowed the reserved prefix,
// with the only values they may have.
var systemPriorityClasses = map[string]int32{
	"system-node-critical":    2000001000,
	"system-cluster-critical": 2000000000,
}

func priorityClassRules(pc *schedulingv1.PriorityClass) field.ErrorList {
	var errs field.ErrorList
	if strings.HasPrefix(pc.Name, systemPriorityClassPrefix) {
		if err := knownSystemPriorityClass(pc); err != nil {
			errs = append(errs, field.Forbidden(metadataPath.Child("name"), fmt.Sprintf("priority class names with '%s' prefix are reserved for system use only. error: %v", systemPriorityClassPrefix, err)))
		}
	} else if pc.Value > highestUserDefinablePriority {
		errs = append(errs, field.Forbidden(field.NewPath("value"), fmt.Sprintf("maximum allowed value of a user defined priority is %v", highestUserDefinablePriority)))
	}
	if pc.PreemptionPolicy != nil {
		errs = append(errs, enum(*pc.PreemptionPolicy, field.NewPath("preemptionPolicy"), preemptionPolicies...)...)
	}
	return errs
}

func knownSystemPriorityClass(pc *schedulingv1.PriorityClass) error {
	value, ok := systemPriorityClasses[pc.Name]
	switch {
	case !ok:
		return fmt.Errorf("%v is not a known system priority class", pc.Name)
	case pc.Value != value:
		return fmt.Errorf("value of %v PriorityClass must be %v", pc.Name, value)
	case pc.GlobalDefault:
		return fmt.Errorf("globalDefault of %v PriorityClass must be false", pc.Name)
	}
	return nil
}

func priorityClassChange(pc, old *schedulingv1.PriorityClass) field.ErrorList {
	var errs field.ErrorList
	if pc.Value != old.Value {
		errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
	}
	errs = append(errs, immutable(pc.PreemptionPolicy, old.PreemptionPolicy, field.NewPath("preemptionPolicy"))...)
	return errs
}
