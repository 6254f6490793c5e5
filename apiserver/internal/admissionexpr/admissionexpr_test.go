package admissionexpr

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestValidate(t *testing.T) {
	webhook := func(exprs ...string) *admissionregistrationv1.ValidatingWebhookConfiguration {
		h := admissionregistrationv1.ValidatingWebhook{Name: "w.example.com"}
		for _, e := range exprs {
			h.MatchConditions = append(h.MatchConditions, admissionregistrationv1.MatchCondition{Name: "c", Expression: e})
		}
		return &admissionregistrationv1.ValidatingWebhookConfiguration{Webhooks: []admissionregistrationv1.ValidatingWebhook{h}}
	}
	policy := func(vars []admissionregistrationv1.Variable, v admissionregistrationv1.Validation, params bool) *admissionregistrationv1.ValidatingAdmissionPolicy {
		p := &admissionregistrationv1.ValidatingAdmissionPolicy{Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			Variables: vars, Validations: []admissionregistrationv1.Validation{v}}}
		if params {
			p.Spec.ParamKind = &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
		}
		return p
	}
	tests := []struct {
		name string
		obj  runtime.Object
		want string // a substring of the one error; empty: valid
	}{
		{"webhook condition", webhook(`request.userInfo.username != "bob"`, `object.metadata.name.startsWith("a")`), ""},
		{"webhook condition with authorizer", webhook(`authorizer.group("").resource("pods").check("get").allowed()`), ""},
		{"webhook condition syntax", webhook(`object.metadata.name ==`), "webhooks[0].matchConditions[0].expression"},
		{"upstream's message", webhook("... [] bad expression"), "compilation failed"},
		{"webhook condition not bool", webhook(`"yes"`), "webhooks[0].matchConditions[0].expression"},
		{"webhook condition unknown variable", webhook(`params.x == 1`), "undeclared reference"},
		{"mutating webhook condition", &admissionregistrationv1.MutatingWebhookConfiguration{Webhooks: []admissionregistrationv1.MutatingWebhook{{
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "c", Expression: "1 +"}}}}}, "webhooks[0].matchConditions[0].expression"},
		{"policy", policy(nil, admissionregistrationv1.Validation{Expression: "object.spec.replicas < 5", MessageExpression: `"too many: " + string(object.spec.replicas)`}, false), ""},
		{"policy variable used", policy([]admissionregistrationv1.Variable{{Name: "max", Expression: "5"}}, admissionregistrationv1.Validation{Expression: "object.spec.replicas < variables.max"}, false), ""},
		{"policy bad variable", policy([]admissionregistrationv1.Variable{{Name: "max", Expression: "5 +"}}, admissionregistrationv1.Validation{Expression: "true"}, false), "spec.variables[0].expression"},
		{"policy params without paramKind", policy(nil, admissionregistrationv1.Validation{Expression: "params.x == 1"}, false), "spec.validations[0].expression"},
		{"policy params with paramKind", policy(nil, admissionregistrationv1.Validation{Expression: `params.data.x == "1"`}, true), ""},
		{"policy message not string", policy(nil, admissionregistrationv1.Validation{Expression: "true", MessageExpression: "1"}, false), "spec.validations[0].messageExpression"},
		{"other objects", &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := Validate(tt.obj)
			switch {
			case tt.want == "" && len(errs) != 0:
				t.Errorf("errors %v, want none", errs)
			case tt.want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tt.want)):
				t.Errorf("errors %v, want one containing %q", errs, tt.want)
			}
		})
	}
}
