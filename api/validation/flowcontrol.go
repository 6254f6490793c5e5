package validation

import (
	"fmt"
	"math"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*flowcontrolv1.FlowSchema]{
		cluster: true,
		name:    pathSegmentName,
		spec:    flowSchemaRules,
		statusChange: func(fs, old *flowcontrolv1.FlowSchema) field.ErrorList {
			return flowConditions(len(fs.Status.Conditions), func(i int) (string, string) {
				return string(fs.Status.Conditions[i].Type), string(fs.Status.Conditions[i].Status)
			})
		},
	})
	register(&kind[*flowcontrolv1.PriorityLevelConfiguration]{
		cluster: true,
		name:    pathSegmentName,
		spec:    priorityLevelRules,
		statusChange: func(pl, old *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
			return flowConditions(len(pl.Status.Conditions), func(i int) (string, string) {
				return string(pl.Status.Conditions[i].Type), string(pl.Status.Conditions[i].Status)
			})
		},
	})
}

// maxHashBits bounds the entropy shuffle sharding draws per request.
const maxHashBits = 60

var subjectKinds = []flowcontrolv1.SubjectKind{flowcontrolv1.SubjectKindGroup, flowcontrolv1.SubjectKindServiceAccount, flowcontrolv1.SubjectKindUser}
var distinguisherTypes = []flowcontrolv1.FlowDistinguisherMethodType{flowcontrolv1.FlowDistinguisherMethodByNamespaceType, flowcontrolv1.FlowDistinguisherMethodByUserType}
var priorityLevelTypes = []flowcontrolv1.PriorityLevelEnablement{flowcontrolv1.PriorityLevelEnablementExempt, flowcontrolv1.PriorityLevelEnablementLimited}
var limitResponseTypes = []flowcontrolv1.LimitResponseType{flowcontrolv1.LimitResponseTypeQueue, flowcontrolv1.LimitResponseTypeReject}

func flowSchemaRules(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	var errs field.ErrorList
	spec := &fs.Spec
	if spec.MatchingPrecedence <= 0 || spec.MatchingPrecedence > 10000 {
		errs = append(errs, field.Invalid(specPath.Child("matchingPrecedence"), spec.MatchingPrecedence, "must be between 1 and 10000, inclusive"))
	}
	if dm := spec.DistinguisherMethod; dm != nil {
		errs = append(errs, enum(dm.Type, specPath.Child("distinguisherMethod", "type"), distinguisherTypes...)...)
	}
	plPath := specPath.Child("priorityLevelConfiguration", "name")
	if spec.PriorityLevelConfiguration.Name == "" {
		errs = append(errs, field.Required(plPath, "must reference a priority level"))
	} else {
		errs = append(errs, each(plPath, spec.PriorityLevelConfiguration.Name, content.IsPathSegmentName(spec.PriorityLevelConfiguration.Name))...)
	}
	for i, r := range spec.Rules {
		errs = append(errs, policyRulesWithSubjects(&r, specPath.Child("rules").Index(i))...)
	}
	return errs
}

func policyRulesWithSubjects(r *flowcontrolv1.PolicyRulesWithSubjects, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Subjects) == 0 {
		errs = append(errs, field.Required(fldPath.Child("subjects"), "subjects must contain at least one value"))
	}
	for i, s := range r.Subjects {
		p := fldPath.Child("subjects").Index(i)
		errs = append(errs, enum(s.Kind, p.Child("kind"), subjectKinds...)...)
		switch s.Kind {
		case flowcontrolv1.SubjectKindUser:
			if s.User == nil || s.User.Name == "" {
				errs = append(errs, field.Required(p.Child("user", "name"), "user name cannot be empty"))
			}
		case flowcontrolv1.SubjectKindGroup:
			if s.Group == nil || s.Group.Name == "" {
				errs = append(errs, field.Required(p.Child("group", "name"), "group name cannot be empty"))
			}
		case flowcontrolv1.SubjectKindServiceAccount:
			if s.ServiceAccount == nil {
				errs = append(errs, field.Required(p.Child("serviceAccount"), "serviceAccount is required when subject kind is 'ServiceAccount'"))
				break
			}
			if s.ServiceAccount.Name == "" {
				errs = append(errs, field.Required(p.Child("serviceAccount", "name"), "must be non-empty"))
			} else if s.ServiceAccount.Name != "*" {
				errs = append(errs, dns1123Subdomain(s.ServiceAccount.Name, p.Child("serviceAccount", "name"))...)
			}
			if s.ServiceAccount.Namespace == "" {
				errs = append(errs, field.Required(p.Child("serviceAccount", "namespace"), "must specify namespace for service account"))
			} else {
				errs = append(errs, dns1123Label(s.ServiceAccount.Namespace, p.Child("serviceAccount", "namespace"))...)
			}
		}
	}
	if len(r.ResourceRules) == 0 && len(r.NonResourceRules) == 0 {
		errs = append(errs, field.Required(fldPath, "at least one of resourceRules and nonResourceRules has to be non-empty"))
	}
	for i, rr := range r.ResourceRules {
		p := fldPath.Child("resourceRules").Index(i)
		errs = append(errs, wildcardList(rr.Verbs, p.Child("verbs"), "verbs")...)
		errs = append(errs, wildcardList(rr.APIGroups, p.Child("apiGroups"), "resource rules must supply at least one api group")...)
		errs = append(errs, wildcardList(rr.Resources, p.Child("resources"), "resource rules must supply at least one resource")...)
		if len(rr.Namespaces) == 0 && !rr.ClusterScope {
			errs = append(errs, field.Required(p.Child("namespaces"), "resource rules that are not cluster scoped must supply at least one namespace"))
		}
		for j, ns := range rr.Namespaces {
			if ns != "*" {
				errs = append(errs, dns1123Label(ns, p.Child("namespaces").Index(j))...)
			}
		}
	}
	for i, nr := range r.NonResourceRules {
		p := fldPath.Child("nonResourceRules").Index(i)
		errs = append(errs, wildcardList(nr.Verbs, p.Child("verbs"), "verbs")...)
		errs = append(errs, wildcardList(nr.NonResourceURLs, p.Child("nonResourceURLs"), "nonResourceURLs must contain at least one value")...)
		for j, u := range nr.NonResourceURLs {
			if u != "*" && !strings.HasPrefix(u, "/") {
				errs = append(errs, field.Invalid(p.Child("nonResourceURLs").Index(j), u, "must start with slash"))
			}
		}
	}
	return errs
}

// wildcardList requires a non-empty list in which "*" stands alone.
func wildcardList(values []string, fldPath *field.Path, what string) field.ErrorList {
	if len(values) == 0 {
		if what == "verbs" {
			what = "verbs must contain at least one value"
		}
		return field.ErrorList{field.Required(fldPath, what)}
	}
	if len(values) > 1 && sets.New(values...).Has("*") {
		return field.ErrorList{field.Invalid(fldPath, values, "if '*' is present, must not specify other values")}
	}
	return nil
}

func priorityLevelRules(pl *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	spec := &pl.Spec
	errs := enum(spec.Type, specPath.Child("type"), priorityLevelTypes...)
	switch spec.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if spec.Limited != nil {
			errs = append(errs, field.Forbidden(specPath.Child("limited"), "must be nil if the type is not Limited"))
		}
		if e := spec.Exempt; e != nil {
			errs = append(errs, optNonNegative(e.NominalConcurrencyShares, specPath.Child("exempt", "nominalConcurrencyShares"))...)
			errs = append(errs, percent(e.LendablePercent, specPath.Child("exempt", "lendablePercent"))...)
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if spec.Exempt != nil {
			errs = append(errs, field.Forbidden(specPath.Child("exempt"), "must be nil if the type is Limited"))
		}
		l, p := spec.Limited, specPath.Child("limited")
		if l == nil {
			errs = append(errs, field.Required(p, "must not be empty when type is Limited"))
			break
		}
		errs = append(errs, optNonNegative(l.NominalConcurrencyShares, p.Child("nominalConcurrencyShares"))...)
		errs = append(errs, percent(l.LendablePercent, p.Child("lendablePercent"))...)
		errs = append(errs, optNonNegative(l.BorrowingLimitPercent, p.Child("borrowingLimitPercent"))...)
		errs = append(errs, limitResponse(&l.LimitResponse, p.Child("limitResponse"))...)
	}
	return errs
}

func percent(v *int32, fldPath *field.Path) field.ErrorList {
	if v != nil && (*v < 0 || *v > 100) {
		return field.ErrorList{field.Invalid(fldPath, *v, "must be between 0 and 100, inclusive")}
	}
	return nil
}

func limitResponse(lr *flowcontrolv1.LimitResponse, fldPath *field.Path) field.ErrorList {
	errs := enum(lr.Type, fldPath.Child("type"), limitResponseTypes...)
	qp := fldPath.Child("queuing")
	switch lr.Type {
	case flowcontrolv1.LimitResponseTypeReject:
		if lr.Queuing != nil {
			errs = append(errs, field.Forbidden(qp, "must be nil if limited.limitResponse.type is not Limited"))
		}
	case flowcontrolv1.LimitResponseTypeQueue:
		q := lr.Queuing
		if q == nil {
			errs = append(errs, field.Required(qp, "must not be empty if limited.limitResponse.type is Limited"))
			break
		}
		errs = append(errs, positive(int64(q.QueueLengthLimit), qp.Child("queueLengthLimit"))...)
		errs = append(errs, positive(int64(q.Queues), qp.Child("queues"))...)
		errs = append(errs, positive(int64(q.HandSize), qp.Child("handSize"))...)
		if q.HandSize > q.Queues {
			errs = append(errs, field.Invalid(qp.Child("handSize"), q.HandSize, fmt.Sprintf("should not be greater than queues (%d)", q.Queues)))
		} else if q.Queues > 0 && q.HandSize > 0 {
			if bits := math.Ceil(math.Log2(float64(q.Queues)) * float64(q.HandSize)); bits > maxHashBits {
				errs = append(errs, field.Invalid(qp.Child("handSize"), q.HandSize, fmt.Sprintf("required entropy bits of deckSize %d and handSize %d should not be greater than %d", q.Queues, q.HandSize, maxHashBits)))
			}
		}
	}
	return errs
}

func flowConditions(n int, at func(int) (string, string)) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("status", "conditions")
	seen := sets.New[string]()
	for i := 0; i < n; i++ {
		typ, status := at(i)
		if typ == "" {
			errs = append(errs, field.Required(p.Index(i).Child("type"), "must not be empty"))
		}
		if seen.Has(typ) {
			errs = append(errs, field.Duplicate(p.Index(i).Child("type"), typ))
		}
		seen.Insert(typ)
		errs = append(errs, enum(status, p.Index(i).Child("status"), "True", "False", "Unknown")...)
	}
	return errs
}
