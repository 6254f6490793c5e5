// Package admissionexpr compiles the CEL expressions of admission
// configurations when they are written — webhooks' matchConditions, and
// admission policies' matchConditions, variables, validations, messages
// and audit annotations — so that one that does not compile, or does not
// give the type its field needs, is refused at the API with its field path,
// as upstream's apiserver refuses it, instead of failing every request it
// would have judged.
package admissionexpr

import (
	"fmt"
	"strings"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// Validate compiles the expressions of obj, a webhook configuration or an
// admission policy; other objects have none.
func Validate(obj runtime.Object) field.ErrorList {
	switch o := obj.(type) {
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		var errs field.ErrorList
		for i, h := range o.Webhooks {
			errs = append(errs, matchConds(h.MatchConditions, false, field.NewPath("webhooks").Index(i).Child("matchConditions"))...)
		}
		return errs
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		var errs field.ErrorList
		for i, h := range o.Webhooks {
			errs = append(errs, matchConds(h.MatchConditions, false, field.NewPath("webhooks").Index(i).Child("matchConditions"))...)
		}
		return errs
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		return validatingPolicy(&o.Spec, field.NewPath("spec"))
	case *admissionregistrationv1.MutatingAdmissionPolicy:
		spec, p := &o.Spec, field.NewPath("spec")
		params := spec.ParamKind != nil
		errs := matchConds(spec.MatchConditions, params, p.Child("matchConditions"))
		return append(errs, variables(spec.Variables, params, p.Child("variables"))...)
	}
	return nil
}

// validatingPolicy compiles a ValidatingAdmissionPolicy's expressions; the
// later ones see its variables.
func validatingPolicy(spec *admissionregistrationv1.ValidatingAdmissionPolicySpec, p *field.Path) field.ErrorList {
	params := spec.ParamKind != nil
	errs := matchConds(spec.MatchConditions, params, p.Child("matchConditions"))
	c, err := composited()
	if err != nil {
		return append(errs, field.InternalError(p, err))
	}
	errs = append(errs, declare(c, spec.Variables, params, p.Child("variables"))...)
	withAuthz := plugincel.OptionalVariableDeclarations{HasParams: params, HasAuthorizer: true}
	for i, v := range spec.Validations {
		vp := p.Child("validations").Index(i)
		errs = append(errs, compile(c, &validating.ValidationCondition{Expression: v.Expression}, withAuthz, vp.Child("expression"))...)
		if strings.TrimSpace(v.MessageExpression) != "" {
			errs = append(errs, compile(c, &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression},
				plugincel.OptionalVariableDeclarations{HasParams: params}, vp.Child("messageExpression"))...)
		}
	}
	for i, a := range spec.AuditAnnotations {
		errs = append(errs, compile(c, &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}, withAuthz,
			p.Child("auditAnnotations").Index(i).Child("valueExpression"))...)
	}
	return errs
}

// matchConds compiles matchConditions: each must give a bool.
func matchConds(conds []admissionregistrationv1.MatchCondition, params bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, m := range conds {
		cond := matchconditions.MatchCondition(m)
		errs = append(errs, compile(stateless(), &cond, plugincel.OptionalVariableDeclarations{HasParams: params, HasAuthorizer: true},
			p.Index(i).Child("expression"))...)
	}
	return errs
}

// variables compiles a policy's variables in order, each seeing the ones
// before it.
func variables(vars []admissionregistrationv1.Variable, params bool, p *field.Path) field.ErrorList {
	c, err := composited()
	if err != nil {
		return field.ErrorList{field.InternalError(p, err)}
	}
	return declare(c, vars, params, p)
}

// declare compiles vars into c, so that later expressions compiled by c
// may use them.
func declare(c *plugincel.CompositedCompiler, vars []admissionregistrationv1.Variable, params bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, v := range vars {
		if strings.TrimSpace(v.Expression) == "" {
			continue // the shared validation reports it
		}
		res := c.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression},
			plugincel.OptionalVariableDeclarations{HasParams: params, HasAuthorizer: true}, environment.NewExpressions)
		if res.Error != nil {
			errs = append(errs, fieldError(p.Index(i).Child("expression"), v.Expression, res.Error))
		}
	}
	return errs
}

// compile reports expr's compilation error at p. An empty expression is
// left to the shared validation, which reports it as required.
func compile(c plugincel.Compiler, expr plugincel.ExpressionAccessor, opts plugincel.OptionalVariableDeclarations, p *field.Path) field.ErrorList {
	if strings.TrimSpace(expr.GetExpression()) == "" {
		return nil
	}
	if res := c.CompileCELExpression(expr, opts, environment.NewExpressions); res.Error != nil {
		return field.ErrorList{fieldError(p, expr.GetExpression(), res.Error)}
	}
	return nil
}

// fieldError turns a CEL compilation error into upstream's field error.
func fieldError(p *field.Path, expr string, err *apiservercel.Error) *field.Error {
	switch err.Type {
	case apiservercel.ErrorTypeRequired:
		return field.Required(p, err.Detail)
	case apiservercel.ErrorTypeInvalid:
		return field.Invalid(p, expr, err.Detail)
	}
	return field.InternalError(p, fmt.Errorf("compile %q: %w", expr, err))
}

// baseEnv is the CEL environment of the version this server is; building
// it takes milliseconds, so it is built once.
var baseEnv = sync.OnceValue(func() *environment.EnvSet {
	return environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
})

// stateless is the compiler for expressions that see no variables.
var stateless = sync.OnceValue(func() plugincel.Compiler { return plugincel.NewCompiler(baseEnv()) })

// composited returns a fresh compiler that remembers the variables it
// compiles: one per policy.
func composited() (*plugincel.CompositedCompiler, error) {
	c, err := plugincel.NewCompositedCompiler(baseEnv())
	if err != nil {
		return nil, fmt.Errorf("CEL compiler: %w", err)
	}
	return c, nil
}
