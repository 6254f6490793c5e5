package validation

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*admissionregistrationv1.ValidatingWebhookConfiguration]{cluster: true, spec: func(c *admissionregistrationv1.ValidatingWebhookConfiguration) field.ErrorList {
		return validatingWebhooks(c.Webhooks, field.NewPath("webhooks"))
	}})
	register(&kind[*admissionregistrationv1.MutatingWebhookConfiguration]{cluster: true, spec: func(c *admissionregistrationv1.MutatingWebhookConfiguration) field.ErrorList {
		return mutatingWebhooks(c.Webhooks, field.NewPath("webhooks"))
	}})
	register(&kind[*admissionregistrationv1.ValidatingAdmissionPolicy]{cluster: true, spec: validatingAdmissionPolicyRules,
		statusChange: func(p, _ *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
			return policyConditions(p.Status.Conditions)
		}})
	register(&kind[*admissionregistrationv1.ValidatingAdmissionPolicyBinding]{cluster: true, spec: validatingAdmissionPolicyBindingRules})
	register(&kind[*admissionregistrationv1.MutatingAdmissionPolicy]{cluster: true, spec: mutatingAdmissionPolicyRules})
	register(&kind[*admissionregistrationv1.MutatingAdmissionPolicyBinding]{cluster: true, spec: func(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) field.ErrorList {
		errs := policyName(b.Spec.PolicyName)
		errs = append(errs, bindingParamRef(b.Spec.ParamRef, specPath.Child("paramRef"))...)
		if b.Spec.MatchResources != nil {
			errs = append(errs, matchResources(b.Spec.MatchResources, specPath.Child("matchResources"), true)...)
		}
		return errs
	}})
}

func policyConditions(conds []metav1.Condition) field.ErrorList {
	return metav1validation.ValidateConditions(conds, field.NewPath("status", "conditions"))
}

var (
	failurePolicies      = []admissionregistrationv1.FailurePolicyType{admissionregistrationv1.Ignore, admissionregistrationv1.Fail}
	matchPolicies        = []admissionregistrationv1.MatchPolicyType{admissionregistrationv1.Exact, admissionregistrationv1.Equivalent}
	sideEffectClasses    = []admissionregistrationv1.SideEffectClass{admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.SideEffectClassNoneOnDryRun}
	reinvocationPolicies = []admissionregistrationv1.ReinvocationPolicyType{admissionregistrationv1.NeverReinvocationPolicy, admissionregistrationv1.IfNeededReinvocationPolicy}
	ruleScopes           = []admissionregistrationv1.ScopeType{admissionregistrationv1.ClusterScope, admissionregistrationv1.NamespacedScope, admissionregistrationv1.AllScopes}
	operationTypes       = []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll, admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete, admissionregistrationv1.Connect}
	// AdmissionReview versions the apiserver can send; a webhook must accept one.
	reviewVersions = sets.New("v1", "v1beta1")
)

// webhook holds the fields validating and mutating webhooks share, so one
// function checks both.
type webhook struct {
	name                    string
	clientConfig            admissionregistrationv1.WebhookClientConfig
	rules                   []admissionregistrationv1.RuleWithOperations
	failurePolicy           *admissionregistrationv1.FailurePolicyType
	matchPolicy             *admissionregistrationv1.MatchPolicyType
	namespaceSelector       *metav1.LabelSelector
	objectSelector          *metav1.LabelSelector
	sideEffects             *admissionregistrationv1.SideEffectClass
	timeoutSeconds          *int32
	admissionReviewVersions []string
	matchConditions         []admissionregistrationv1.MatchCondition
}

func validatingWebhooks(hooks []admissionregistrationv1.ValidatingWebhook, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, h := range hooks {
		p := fldPath.Index(i)
		errs = append(errs, webhookRules(webhook{h.Name, h.ClientConfig, h.Rules, h.FailurePolicy, h.MatchPolicy, h.NamespaceSelector, h.ObjectSelector, h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions, h.MatchConditions}, p)...)
		errs = append(errs, uniqueName(names, h.Name, p.Child("name"))...)
	}
	return errs
}

func mutatingWebhooks(hooks []admissionregistrationv1.MutatingWebhook, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, h := range hooks {
		p := fldPath.Index(i)
		errs = append(errs, webhookRules(webhook{h.Name, h.ClientConfig, h.Rules, h.FailurePolicy, h.MatchPolicy, h.NamespaceSelector, h.ObjectSelector, h.SideEffects, h.TimeoutSeconds, h.AdmissionReviewVersions, h.MatchConditions}, p)...)
		errs = append(errs, uniqueName(names, h.Name, p.Child("name"))...)
		if h.ReinvocationPolicy != nil {
			errs = append(errs, enum(*h.ReinvocationPolicy, p.Child("reinvocationPolicy"), reinvocationPolicies...)...)
		}
	}
	return errs
}

func uniqueName(seen sets.Set[string], name string, fldPath *field.Path) field.ErrorList {
	if name != "" && seen.Has(name) {
		return field.ErrorList{field.Duplicate(fldPath, name)}
	}
	seen.Insert(name)
	return nil
}

func webhookRules(h webhook, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	// Webhook names are fully qualified so that two vendors' hooks cannot clash.
	if h.name == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), ""))
	} else {
		errs = append(errs, dns1123Subdomain(h.name, fldPath.Child("name"))...)
		if len(strings.Split(h.name, ".")) < 3 {
			errs = append(errs, field.Invalid(fldPath.Child("name"), h.name, "should be a domain with at least three segments separated by dots"))
		}
	}
	for i, r := range h.rules {
		errs = append(errs, ruleWithOperations(&r, fldPath.Child("rules").Index(i))...)
	}
	if h.failurePolicy != nil {
		errs = append(errs, enum(*h.failurePolicy, fldPath.Child("failurePolicy"), failurePolicies...)...)
	}
	if h.matchPolicy != nil {
		errs = append(errs, enum(*h.matchPolicy, fldPath.Child("matchPolicy"), matchPolicies...)...)
	}
	if h.sideEffects == nil {
		errs = append(errs, field.Required(fldPath.Child("sideEffects"), fmt.Sprintf("must specify one of %s, %s", admissionregistrationv1.SideEffectClassNone, admissionregistrationv1.SideEffectClassNoneOnDryRun)))
	} else {
		errs = append(errs, enum(*h.sideEffects, fldPath.Child("sideEffects"), sideEffectClasses...)...)
	}
	if h.timeoutSeconds != nil && (*h.timeoutSeconds < 1 || *h.timeoutSeconds > 30) {
		errs = append(errs, field.Invalid(fldPath.Child("timeoutSeconds"), *h.timeoutSeconds, "the timeout value must be between 1 and 30 seconds"))
	}
	errs = append(errs, labelSelector(h.namespaceSelector, fldPath.Child("namespaceSelector"))...)
	errs = append(errs, labelSelector(h.objectSelector, fldPath.Child("objectSelector"))...)
	errs = append(errs, admissionReviewVersions(h.admissionReviewVersions, fldPath.Child("admissionReviewVersions"))...)
	errs = append(errs, clientConfig(&h.clientConfig, fldPath.Child("clientConfig"))...)
	errs = append(errs, matchConditions(h.matchConditions, fldPath.Child("matchConditions"))...)
	return errs
}

func admissionReviewVersions(versions []string, fldPath *field.Path) field.ErrorList {
	if len(versions) == 0 {
		return field.ErrorList{field.Required(fldPath, fmt.Sprintf("must specify one of %s", strings.Join(sets.List(reviewVersions), ", ")))}
	}
	var errs field.ErrorList
	seen := sets.New[string]()
	known := false
	for i, v := range versions {
		if seen.Has(v) {
			errs = append(errs, field.Invalid(fldPath.Index(i), v, "duplicate version"))
			continue
		}
		seen.Insert(v)
		for _, msg := range utilvalidation.IsDNS1035Label(v) {
			errs = append(errs, field.Invalid(fldPath.Index(i), v, msg))
		}
		known = known || reviewVersions.Has(v)
	}
	if !known {
		errs = append(errs, field.Invalid(fldPath, versions, fmt.Sprintf("must include at least one of %s", strings.Join(sets.List(reviewVersions), ", "))))
	}
	return errs
}

func clientConfig(c *admissionregistrationv1.WebhookClientConfig, fldPath *field.Path) field.ErrorList {
	hasURL, hasService := c.URL != nil, c.Service != nil
	switch {
	case hasURL == hasService:
		return field.ErrorList{field.Required(fldPath, "exactly one of url or service is required")}
	case hasURL:
		return webhookURL(*c.URL, fldPath.Child("url"))
	}
	var errs field.ErrorList
	s, p := c.Service, fldPath.Child("service")
	if s.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), "service name is required"))
	} else {
		errs = append(errs, dns1123Label(s.Name, p.Child("name"))...)
	}
	if s.Namespace == "" {
		errs = append(errs, field.Required(p.Child("namespace"), "service namespace is required"))
	} else {
		errs = append(errs, dns1123Label(s.Namespace, p.Child("namespace"))...)
	}
	if s.Path != nil {
		errs = append(errs, webhookPath(*s.Path, p.Child("path"))...)
	}
	if s.Port != nil {
		errs = append(errs, portNum(*s.Port, p.Child("port"))...)
	}
	return errs
}

func webhookURL(raw string, fldPath *field.Path) field.ErrorList {
	u, err := url.Parse(raw)
	if err != nil {
		return field.ErrorList{field.Invalid(fldPath, raw, "url must be a valid URL: "+err.Error())}
	}
	var errs field.ErrorList
	if u.Scheme != "https" {
		errs = append(errs, field.Invalid(fldPath, u.Scheme, "'https' is the only allowed URL scheme"))
	}
	if u.Host == "" {
		errs = append(errs, field.Invalid(fldPath, u.Host, "host must be specified"))
	}
	if u.User != nil {
		errs = append(errs, field.Invalid(fldPath, u.User.String(), "user information is not permitted in the URL"))
	}
	if u.Fragment != "" || u.RawQuery != "" {
		errs = append(errs, field.Invalid(fldPath, raw, "fragments and query parameters are not permitted in the URL"))
	}
	return errs
}

func webhookPath(p string, fldPath *field.Path) field.ErrorList {
	if p == "" {
		return nil
	}
	if !strings.HasPrefix(p, "/") {
		return field.ErrorList{field.Invalid(fldPath, p, "must start with a '/'")}
	}
	var errs field.ErrorList
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "" && p != "/" {
			errs = append(errs, field.Invalid(fldPath, p, "segment[0] may not be empty"))
			break
		}
	}
	return errs
}

func ruleWithOperations(r *admissionregistrationv1.RuleWithOperations, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Operations) == 0 {
		errs = append(errs, field.Required(fldPath.Child("operations"), ""))
	}
	if len(r.Operations) > 1 && hasWildcard(r.Operations) {
		errs = append(errs, field.Invalid(fldPath.Child("operations"), r.Operations, "if '*' is present, must not specify other operations"))
	}
	for i, op := range r.Operations {
		errs = append(errs, enum(op, fldPath.Child("operations").Index(i), operationTypes...)...)
	}
	return append(errs, rule(&r.Rule, fldPath)...)
}

func hasWildcard[S ~string](items []S) bool {
	for _, s := range items {
		if s == "*" {
			return true
		}
	}
	return false
}

func rule(r *admissionregistrationv1.Rule, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.APIGroups) == 0 {
		errs = append(errs, field.Required(fldPath.Child("apiGroups"), ""))
	}
	if len(r.APIGroups) > 1 && hasWildcard(r.APIGroups) {
		errs = append(errs, field.Invalid(fldPath.Child("apiGroups"), r.APIGroups, "if '*' is present, must not specify other API groups"))
	}
	if len(r.APIVersions) == 0 {
		errs = append(errs, field.Required(fldPath.Child("apiVersions"), ""))
	}
	if len(r.APIVersions) > 1 && hasWildcard(r.APIVersions) {
		errs = append(errs, field.Invalid(fldPath.Child("apiVersions"), r.APIVersions, "if '*' is present, must not specify other API versions"))
	}
	for i, v := range r.APIVersions {
		if v == "" {
			errs = append(errs, field.Required(fldPath.Child("apiVersions").Index(i), ""))
		}
	}
	errs = append(errs, ruleResources(r.Resources, fldPath.Child("resources"))...)
	if r.Scope != nil {
		errs = append(errs, enum(*r.Scope, fldPath.Child("scope"), ruleScopes...)...)
	}
	return errs
}

// ruleResources checks "resource", "resource/subresource" and the
// wildcards "*", "*/*", "*/sub" and "res/*", which may not overlap.
func ruleResources(resources []string, fldPath *field.Path) field.ErrorList {
	if len(resources) == 0 {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	var errs field.ErrorList
	seen := sets.New[string]()
	wildSubs := sets.New[string]()
	wildResources := sets.New[string]()
	for i, r := range resources {
		p := fldPath.Index(i)
		if r == "" {
			errs = append(errs, field.Required(p, ""))
			continue
		}
		if seen.Has(r) {
			errs = append(errs, field.Duplicate(p, r))
		}
		seen.Insert(r)
		res, sub, hasSub := strings.Cut(r, "/")
		if strings.Contains(sub, "/") {
			errs = append(errs, field.Invalid(p, r, "must be of the form resource or resource/subresource"))
			continue
		}
		if res == "*" && hasSub {
			wildResources.Insert(sub)
		}
		if sub == "*" {
			wildSubs.Insert(res)
		}
	}
	if seen.Has("*") && len(resources) > 1 {
		errs = append(errs, field.Invalid(fldPath, resources, "if '*' is present, must not specify other resources without subresources"))
	}
	if seen.Has("*/*") && len(resources) > 1 && !(len(resources) == 2 && seen.Has("*")) {
		errs = append(errs, field.Invalid(fldPath, resources, "if '*/*' is present, must not specify other resources"))
	}
	for i, r := range resources {
		res, sub, hasSub := strings.Cut(r, "/")
		if !hasSub || res == "*" || sub == "*" {
			continue
		}
		if wildSubs.Has(res) {
			errs = append(errs, field.Invalid(fldPath.Index(i), r, fmt.Sprintf("if '%s/*' is present, must not specify %s", res, r)))
		}
		if wildResources.Has(sub) {
			errs = append(errs, field.Invalid(fldPath.Index(i), r, fmt.Sprintf("if '*/%s' is present, must not specify %s", sub, r)))
		}
	}
	return errs
}

func matchConditions(conds []admissionregistrationv1.MatchCondition, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(conds) > 64 {
		errs = append(errs, field.TooMany(fldPath, len(conds), 64))
	}
	names := sets.New[string]()
	for i, c := range conds {
		p := fldPath.Index(i)
		if c.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else {
			errs = append(errs, qualifiedName(c.Name, p.Child("name"))...)
			errs = append(errs, uniqueName(names, c.Name, p.Child("name"))...)
		}
		if strings.TrimSpace(c.Expression) == "" {
			errs = append(errs, field.Required(p.Child("expression"), ""))
		}
	}
	return errs
}

func matchResources(m *admissionregistrationv1.MatchResources, fldPath *field.Path, binding bool) field.ErrorList {
	var errs field.ErrorList
	if m.MatchPolicy != nil {
		errs = append(errs, enum(*m.MatchPolicy, fldPath.Child("matchPolicy"), matchPolicies...)...)
	}
	errs = append(errs, labelSelector(m.NamespaceSelector, fldPath.Child("namespaceSelector"))...)
	errs = append(errs, labelSelector(m.ObjectSelector, fldPath.Child("objectSelector"))...)
	// A policy must say what it applies to; a binding may narrow nothing.
	if !binding && len(m.ResourceRules) == 0 {
		errs = append(errs, field.Required(fldPath.Child("resourceRules"), ""))
	}
	for i, r := range m.ResourceRules {
		errs = append(errs, namedRule(&r, fldPath.Child("resourceRules").Index(i))...)
	}
	for i, r := range m.ExcludeResourceRules {
		errs = append(errs, namedRule(&r, fldPath.Child("excludeResourceRules").Index(i))...)
	}
	return errs
}

func namedRule(r *admissionregistrationv1.NamedRuleWithOperations, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, n := range r.ResourceNames {
		for _, msg := range utilvalidation.IsDNS1123Subdomain(n) {
			errs = append(errs, field.Invalid(fldPath.Child("resourceNames").Index(i), n, msg))
		}
	}
	return append(errs, ruleWithOperations(&r.RuleWithOperations, fldPath)...)
}

var (
	validationReasons = []metav1.StatusReason{metav1.StatusReasonUnauthorized, metav1.StatusReasonForbidden, metav1.StatusReasonInvalid, metav1.StatusReasonRequestEntityTooLarge}
	validationActions = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny, admissionregistrationv1.Warn, admissionregistrationv1.Audit}
	notFoundActions   = []admissionregistrationv1.ParameterNotFoundActionType{admissionregistrationv1.AllowAction, admissionregistrationv1.DenyAction}
	patchTypes        = []admissionregistrationv1.PatchType{admissionregistrationv1.PatchTypeApplyConfiguration, admissionregistrationv1.PatchTypeJSONPatch}
	// celIdentifier is what a variable name must be to be usable as variables.<name>.
	celIdentifier = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*$`)
)

func validatingAdmissionPolicyRules(p *admissionregistrationv1.ValidatingAdmissionPolicy) field.ErrorList {
	s := &p.Spec
	var errs field.ErrorList
	errs = append(errs, policyCommon(s.FailurePolicy, s.ParamKind, s.MatchConstraints, s.MatchConditions, s.Variables)...)
	if len(s.Validations) == 0 && len(s.AuditAnnotations) == 0 {
		errs = append(errs, field.Required(specPath.Child("validations"), "validations or auditAnnotations must contain at least one item"))
	}
	for i, v := range s.Validations {
		vp := specPath.Child("validations").Index(i)
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, field.Required(vp.Child("expression"), "expression is not specified"))
		}
		if strings.Contains(v.Message, "\n") {
			errs = append(errs, field.Invalid(vp.Child("message"), v.Message, "message must not contain line breaks"))
		}
		if len(strings.TrimSpace(v.Message)) == 0 && v.Message != "" {
			errs = append(errs, field.Invalid(vp.Child("message"), v.Message, "message must be non-empty if specified"))
		}
		if v.Reason != nil {
			errs = append(errs, enum(*v.Reason, vp.Child("reason"), validationReasons...)...)
		}
	}
	keys := sets.New[string]()
	for i, a := range s.AuditAnnotations {
		ap := specPath.Child("auditAnnotations").Index(i)
		if a.Key == "" {
			errs = append(errs, field.Required(ap.Child("key"), ""))
		} else {
			errs = append(errs, qualifiedName(p.Name+"/"+a.Key, ap.Child("key"))...)
			errs = append(errs, uniqueName(keys, a.Key, ap.Child("key"))...)
		}
		if strings.TrimSpace(a.ValueExpression) == "" {
			errs = append(errs, field.Required(ap.Child("valueExpression"), "valueExpression is not specified"))
		}
	}
	return errs
}

func mutatingAdmissionPolicyRules(p *admissionregistrationv1.MutatingAdmissionPolicy) field.ErrorList {
	s := &p.Spec
	var errs field.ErrorList
	errs = append(errs, policyCommon(s.FailurePolicy, s.ParamKind, s.MatchConstraints, s.MatchConditions, s.Variables)...)
	errs = append(errs, enum(s.ReinvocationPolicy, specPath.Child("reinvocationPolicy"), reinvocationPolicies...)...)
	if len(s.Mutations) == 0 {
		errs = append(errs, field.Required(specPath.Child("mutations"), "mutations must contain at least one item"))
	}
	for i, m := range s.Mutations {
		mp := specPath.Child("mutations").Index(i)
		errs = append(errs, enum(m.PatchType, mp.Child("patchType"), patchTypes...)...)
		switch m.PatchType {
		case admissionregistrationv1.PatchTypeApplyConfiguration:
			if m.ApplyConfiguration == nil || strings.TrimSpace(m.ApplyConfiguration.Expression) == "" {
				errs = append(errs, field.Required(mp.Child("applyConfiguration"), "applyConfiguration.expression is required when patchType is ApplyConfiguration"))
			}
		case admissionregistrationv1.PatchTypeJSONPatch:
			if m.JSONPatch == nil || strings.TrimSpace(m.JSONPatch.Expression) == "" {
				errs = append(errs, field.Required(mp.Child("jsonPatch"), "jsonPatch.expression is required when patchType is JSONPatch"))
			}
		}
	}
	return errs
}

func policyCommon(failure *admissionregistrationv1.FailurePolicyType, pk *admissionregistrationv1.ParamKind, match *admissionregistrationv1.MatchResources, conds []admissionregistrationv1.MatchCondition, vars []admissionregistrationv1.Variable) field.ErrorList {
	var errs field.ErrorList
	if failure != nil {
		errs = append(errs, enum(*failure, specPath.Child("failurePolicy"), failurePolicies...)...)
	}
	if pk != nil {
		pp := specPath.Child("paramKind")
		if pk.APIVersion == "" {
			errs = append(errs, field.Required(pp.Child("apiVersion"), ""))
		} else if _, err := schema.ParseGroupVersion(pk.APIVersion); err != nil {
			errs = append(errs, field.Invalid(pp.Child("apiVersion"), pk.APIVersion, err.Error()))
		}
		if pk.Kind == "" {
			errs = append(errs, field.Required(pp.Child("kind"), ""))
		}
	}
	if match == nil {
		errs = append(errs, field.Required(specPath.Child("matchConstraints"), ""))
	} else {
		errs = append(errs, matchResources(match, specPath.Child("matchConstraints"), false)...)
	}
	errs = append(errs, matchConditions(conds, specPath.Child("matchConditions"))...)
	names := sets.New[string]()
	for i, v := range vars {
		vp := specPath.Child("variables").Index(i)
		if v.Name == "" {
			errs = append(errs, field.Required(vp.Child("name"), "name is not specified"))
		} else if !celIdentifier.MatchString(v.Name) {
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, "name is not a valid CEL identifier"))
		} else {
			errs = append(errs, uniqueName(names, v.Name, vp.Child("name"))...)
		}
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, field.Required(vp.Child("expression"), "expression is not specified"))
		}
	}
	return errs
}

func policyName(name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(specPath.Child("policyName"), "")}
	}
	return dns1123Subdomain(name, specPath.Child("policyName"))
}

func validatingAdmissionPolicyBindingRules(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	errs := policyName(b.Spec.PolicyName)
	errs = append(errs, bindingParamRef(b.Spec.ParamRef, specPath.Child("paramRef"))...)
	if b.Spec.MatchResources != nil {
		errs = append(errs, matchResources(b.Spec.MatchResources, specPath.Child("matchResources"), true)...)
	}
	ap := specPath.Child("validationActions")
	if len(b.Spec.ValidationActions) == 0 {
		errs = append(errs, field.Required(ap, "at least one validation action is required"))
	}
	seen := sets.New[admissionregistrationv1.ValidationAction]()
	for i, a := range b.Spec.ValidationActions {
		if seen.Has(a) {
			errs = append(errs, field.Duplicate(ap.Index(i), a))
		}
		seen.Insert(a)
		errs = append(errs, enum(a, ap.Index(i), validationActions...)...)
	}
	if seen.Has(admissionregistrationv1.Deny) && seen.Has(admissionregistrationv1.Warn) {
		errs = append(errs, field.Invalid(ap, b.Spec.ValidationActions, "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)"))
	}
	return errs
}

func bindingParamRef(r *admissionregistrationv1.ParamRef, fldPath *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	switch {
	case r.Name != "" && r.Selector != nil:
		errs = append(errs, field.Forbidden(fldPath.Child("name"), "name and selector are mutually exclusive"))
	case r.Name == "" && r.Selector == nil:
		errs = append(errs, field.Required(fldPath, "one of name or selector must be specified"))
	}
	if r.Name != "" {
		errs = append(errs, dns1123Subdomain(r.Name, fldPath.Child("name"))...)
	}
	if r.Namespace != "" {
		errs = append(errs, dns1123Label(r.Namespace, fldPath.Child("namespace"))...)
	}
	errs = append(errs, labelSelector(r.Selector, fldPath.Child("selector"))...)
	if r.ParameterNotFoundAction == nil {
		errs = append(errs, field.Required(fldPath.Child("parameterNotFoundAction"), ""))
	} else {
		errs = append(errs, enum(*r.ParameterNotFoundAction, fldPath.Child("parameterNotFoundAction"), notFoundActions...)...)
	}
	return errs
}
