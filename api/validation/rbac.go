package validation

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// RBAC objects are named by path segments rather than DNS names, so that
// roles like "system:controller:job-controller" are valid.
func init() {
	register(&kind[*rbacv1.Role]{name: rbacName, spec: func(r *rbacv1.Role) field.ErrorList {
		return policyRules(r.Rules, true, field.NewPath("rules"))
	}})
	register(&kind[*rbacv1.ClusterRole]{cluster: true, name: rbacName, spec: clusterRoleRules})
	register(&kind[*rbacv1.RoleBinding]{name: rbacName,
		spec: func(b *rbacv1.RoleBinding) field.ErrorList {
			return binding(b.RoleRef, b.Subjects, true)
		},
		change: func(b, old *rbacv1.RoleBinding) field.ErrorList { return roleRefChange(b.RoleRef, old.RoleRef) },
	})
	register(&kind[*rbacv1.ClusterRoleBinding]{cluster: true, name: rbacName,
		spec: func(b *rbacv1.ClusterRoleBinding) field.ErrorList {
			return binding(b.RoleRef, b.Subjects, false)
		},
		change: func(b, old *rbacv1.ClusterRoleBinding) field.ErrorList { return roleRefChange(b.RoleRef, old.RoleRef) },
	})
}

// rbacName is upstream's RBAC name rule: any string usable as one path
// segment.
func rbacName(name string, _ bool) []string { return content.IsPathSegmentName(name) }

func clusterRoleRules(r *rbacv1.ClusterRole) field.ErrorList {
	errs := policyRules(r.Rules, false, field.NewPath("rules"))
	if r.AggregationRule == nil {
		return errs
	}
	selPath := field.NewPath("aggregationRule", "clusterRoleSelectors")
	if len(r.AggregationRule.ClusterRoleSelectors) == 0 {
		errs = append(errs, field.Required(selPath, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
	}
	for i := range r.AggregationRule.ClusterRoleSelectors {
		sel := &r.AggregationRule.ClusterRoleSelectors[i]
		errs = append(errs, labelSelector(sel, selPath.Index(i))...)
		if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
			errs = append(errs, field.Invalid(selPath.Index(i), *sel, "invalid label selector."))
		}
	}
	return errs
}

// policyRules checks each rule: verbs always; then either non-resource URLs
// alone (never in a namespaced Role) or API groups with resources.
func policyRules(rules []rbacv1.PolicyRule, namespaced bool, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range rules {
		p := fldPath.Index(i)
		if len(r.Verbs) == 0 {
			errs = append(errs, field.Required(p.Child("verbs"), "verbs must contain at least one value"))
		}
		if len(r.NonResourceURLs) > 0 {
			if namespaced {
				errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), r.NonResourceURLs, "namespaced rules cannot apply to non-resource URLs"))
			}
			if len(r.APIGroups) > 0 || len(r.Resources) > 0 || len(r.ResourceNames) > 0 {
				errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), r.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
			}
			continue
		}
		if len(r.APIGroups) == 0 {
			errs = append(errs, field.Required(p.Child("apiGroups"), "resource rules must supply at least one api group"))
		}
		if len(r.Resources) == 0 {
			errs = append(errs, field.Required(p.Child("resources"), "resource rules must supply at least one resource"))
		}
	}
	return errs
}

// binding checks a roleRef and subjects. A RoleBinding may reference a Role
// or a ClusterRole; a ClusterRoleBinding only a ClusterRole, and its service
// account subjects must name their namespace.
func binding(ref rbacv1.RoleRef, subjects []rbacv1.Subject, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	refPath := field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		errs = append(errs, field.NotSupported(refPath.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	kinds := []string{"ClusterRole"}
	if namespaced {
		kinds = []string{"Role", "ClusterRole"}
	}
	if !contains(kinds, ref.Kind) {
		errs = append(errs, field.NotSupported(refPath.Child("kind"), ref.Kind, kinds))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(refPath.Child("name"), ""))
	} else {
		for _, msg := range rbacName(ref.Name, false) {
			errs = append(errs, field.Invalid(refPath.Child("name"), ref.Name, msg))
		}
	}
	for i, s := range subjects {
		errs = append(errs, subject(s, namespaced, field.NewPath("subjects").Index(i))...)
	}
	return errs
}

func subject(s rbacv1.Subject, namespaced bool, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), ""))
	}
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		if s.Name != "" {
			errs = append(errs, dns1123Subdomain(s.Name, fldPath.Child("name"))...)
		}
		if s.APIGroup != "" {
			errs = append(errs, field.NotSupported(fldPath.Child("apiGroup"), s.APIGroup, []string{""}))
		}
		if !namespaced && s.Namespace == "" {
			errs = append(errs, field.Required(fldPath.Child("namespace"), ""))
		}
	case rbacv1.UserKind, rbacv1.GroupKind:
		if s.APIGroup != rbacv1.GroupName {
			errs = append(errs, field.NotSupported(fldPath.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
		}
	default:
		errs = append(errs, field.NotSupported(fldPath.Child("kind"), s.Kind, []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
	}
	return errs
}

// roleRefChange forbids pointing a binding at another role: deleting and
// recreating it makes the change visible to the escalation checks.
func roleRefChange(ref, old rbacv1.RoleRef) field.ErrorList {
	if ref != old {
		return field.ErrorList{field.Invalid(field.NewPath("roleRef"), ref, "cannot change roleRef")}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
