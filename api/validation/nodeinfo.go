package validation

import (
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*coordinationv1.Lease]{spec: leaseRules})
	register(&kind[*nodev1.RuntimeClass]{
		cluster: true,
		spec:    runtimeClassRules,
		change: func(rc, old *nodev1.RuntimeClass) field.ErrorList {
			return immutable(rc.Handler, old.Handler, field.NewPath("handler"))
		},
	})
}

func leaseRules(l *coordinationv1.Lease) field.ErrorList {
	var errs field.ErrorList
	spec := &l.Spec
	if d := spec.LeaseDurationSeconds; d != nil && *d <= 0 {
		errs = append(errs, field.Invalid(specPath.Child("leaseDurationSeconds"), *d, "must be greater than 0"))
	}
	if t := spec.LeaseTransitions; t != nil && *t < 0 {
		errs = append(errs, field.Invalid(specPath.Child("leaseTransitions"), *t, "must be greater than or equal to 0"))
	}
	if spec.Strategy != nil {
		s := string(*spec.Strategy)
		p := specPath.Child("strategy")
		switch {
		case s == "":
			errs = append(errs, field.Required(p, ""))
		case s == string(coordinationv1.OldestEmulationVersion):
		case !strings.Contains(s, "/"):
			errs = append(errs, field.NotSupported(p, s, []string{string(coordinationv1.OldestEmulationVersion)}))
		default:
			errs = append(errs, qualifiedName(s, p)...)
		}
	}
	if spec.PreferredHolder != nil && *spec.PreferredHolder != "" && (spec.Strategy == nil || *spec.Strategy == "") {
		errs = append(errs, field.Forbidden(specPath.Child("preferredHolder"), "may only be specified if `strategy` is defined"))
	}
	return errs
}

func runtimeClassRules(rc *nodev1.RuntimeClass) field.ErrorList {
	var errs field.ErrorList
	hp := field.NewPath("handler")
	errs = append(errs, each(hp, rc.Handler, apimachineryvalidation.NameIsDNSLabel(rc.Handler, false))...)
	if rc.Overhead != nil {
		errs = append(errs, resourceRequirements(&corev1.ResourceRequirements{Limits: rc.Overhead.PodFixed}, containerResourceName, field.NewPath("overhead", "podFixed"))...)
	}
	if s := rc.Scheduling; s != nil {
		errs = append(errs, metav1validation.ValidateLabels(s.NodeSelector, field.NewPath("scheduling", "nodeSelector"))...)
		errs = append(errs, tolerations(s.Tolerations, field.NewPath("scheduling", "tolerations"))...)
	}
	return errs
}
