package defaults

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// defaultWebhookTimeout is how long the apiserver waits for a webhook that
// names no timeout; short, because every matching write waits on it.
const defaultWebhookTimeout int32 = 10

// ValidatingWebhookConfiguration defaults each webhook so that a webhook
// that fails refuses the request, matches equivalent versions of its rules,
// and selects every namespace and object.
func ValidatingWebhookConfiguration(c *admissionregistrationv1.ValidatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		webhookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds)
		rules(w.Rules)
		serviceReference(w.ClientConfig.Service)
	}
}

// MutatingWebhookConfiguration defaults as ValidatingWebhookConfiguration,
// and does not call a webhook a second time unless it asks.
func MutatingWebhookConfiguration(c *admissionregistrationv1.MutatingWebhookConfiguration) {
	for i := range c.Webhooks {
		w := &c.Webhooks[i]
		webhookCommon(&w.FailurePolicy, &w.MatchPolicy, &w.NamespaceSelector, &w.ObjectSelector, &w.TimeoutSeconds)
		if w.ReinvocationPolicy == nil {
			w.ReinvocationPolicy = new(admissionregistrationv1.NeverReinvocationPolicy)
		}
		rules(w.Rules)
		serviceReference(w.ClientConfig.Service)
	}
}

// ValidatingAdmissionPolicy fails closed unless told otherwise.
func ValidatingAdmissionPolicy(p *admissionregistrationv1.ValidatingAdmissionPolicy) {
	if p.Spec.FailurePolicy == nil {
		p.Spec.FailurePolicy = new(admissionregistrationv1.Fail)
	}
	matchResources(p.Spec.MatchConstraints)
}

// ValidatingAdmissionPolicyBinding defaults its match resources and the
// action taken when its parameter object is missing.
func ValidatingAdmissionPolicyBinding(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	matchResources(b.Spec.MatchResources)
	paramRef(b.Spec.ParamRef)
}

// MutatingAdmissionPolicy fails closed and runs once unless told otherwise.
func MutatingAdmissionPolicy(p *admissionregistrationv1.MutatingAdmissionPolicy) {
	if p.Spec.FailurePolicy == nil {
		p.Spec.FailurePolicy = new(admissionregistrationv1.Fail)
	}
	if p.Spec.ReinvocationPolicy == "" {
		p.Spec.ReinvocationPolicy = admissionregistrationv1.NeverReinvocationPolicy
	}
	matchResources(p.Spec.MatchConstraints)
}

// MutatingAdmissionPolicyBinding defaults as ValidatingAdmissionPolicyBinding.
func MutatingAdmissionPolicyBinding(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) {
	matchResources(b.Spec.MatchResources)
	paramRef(b.Spec.ParamRef)
}

func webhookCommon(failure **admissionregistrationv1.FailurePolicyType, match **admissionregistrationv1.MatchPolicyType, nsSel, objSel **metav1.LabelSelector, timeout **int32) {
	if *failure == nil {
		*failure = new(admissionregistrationv1.Fail)
	}
	if *match == nil {
		*match = new(admissionregistrationv1.Equivalent)
	}
	if *nsSel == nil {
		*nsSel = &metav1.LabelSelector{}
	}
	if *objSel == nil {
		*objSel = &metav1.LabelSelector{}
	}
	if *timeout == nil {
		*timeout = new(defaultWebhookTimeout)
	}
}

func rules(rs []admissionregistrationv1.RuleWithOperations) {
	for i := range rs {
		rule(&rs[i].Rule)
	}
}

// rule matches both scopes when none is named.
func rule(r *admissionregistrationv1.Rule) {
	if r.Scope == nil {
		r.Scope = new(admissionregistrationv1.AllScopes)
	}
}

func serviceReference(s *admissionregistrationv1.ServiceReference) {
	if s != nil && s.Port == nil {
		s.Port = new(int32(443))
	}
}

func matchResources(m *admissionregistrationv1.MatchResources) {
	if m == nil {
		return
	}
	if m.MatchPolicy == nil {
		m.MatchPolicy = new(admissionregistrationv1.Equivalent)
	}
	if m.NamespaceSelector == nil {
		m.NamespaceSelector = &metav1.LabelSelector{}
	}
	if m.ObjectSelector == nil {
		m.ObjectSelector = &metav1.LabelSelector{}
	}
	for i := range m.ResourceRules {
		rule(&m.ResourceRules[i].Rule)
	}
	for i := range m.ExcludeResourceRules {
		rule(&m.ExcludeResourceRules[i].Rule)
	}
}

func paramRef(r *admissionregistrationv1.ParamRef) {
	if r != nil && r.ParameterNotFoundAction == nil {
		r.ParameterNotFoundAction = new(admissionregistrationv1.DenyAction)
	}
}
