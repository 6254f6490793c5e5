package rbac

import (
	"context"
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// Authorizer is the RBAC authorizer and rule resolver.
type Authorizer struct {
	*Resolver
	// synced are the HasSynced of the informers it reads; none when it
	// was built over caches of its caller's.
	synced []cache.InformerSynced
}

var (
	_ authorizer.Authorizer   = (*Authorizer)(nil)
	_ authorizer.RuleResolver = (*Authorizer)(nil)
)

// New returns an authorizer over r.
func New(r *Resolver) *Authorizer { return &Authorizer{Resolver: r} }

// NewFromInformers returns an authorizer reading the RBAC informers of f,
// adding the subject index to the binding informers. Call it before f is
// started.
func NewFromInformers(f informers.SharedInformerFactory) (*Authorizer, error) {
	rbacInf := f.Rbac().V1()
	rb, crb := rbacInf.RoleBindings().Informer(), rbacInf.ClusterRoleBindings().Informer()
	if err := rb.AddIndexers(Indexers()); err != nil {
		return nil, fmt.Errorf("index rolebindings: %w", err)
	}
	if err := crb.AddIndexers(Indexers()); err != nil {
		return nil, fmt.Errorf("index clusterrolebindings: %w", err)
	}
	roles, clusterRoles := rbacInf.Roles().Informer(), rbacInf.ClusterRoles().Informer()
	a := New(NewResolver(rbacInf.Roles().Lister(), rbacInf.ClusterRoles().Lister(), rb.GetIndexer(), crb.GetIndexer()))
	a.synced = []cache.InformerSynced{roles.HasSynced, clusterRoles.HasSynced, rb.HasSynced, crb.HasSynced}
	return a, nil
}

// Synced returns the HasSynced of the informers the authorizer reads.
func (a *Authorizer) Synced() []cache.InformerSynced { return a.synced }

// Authorize allows the request if a rule bound to the user covers it, and
// otherwise has no opinion, so later authorizers may still allow it.
func (a *Authorizer) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	u := attrs.GetUser()
	if u == nil {
		return authorizer.DecisionNoOpinion, "no user on request", nil
	}
	var allowedBy string
	var errs []string
	a.visitRules(u, attrs.GetNamespace(), func(source string, rule *rbacv1.PolicyRule, err error) bool {
		if err != nil {
			errs = append(errs, err.Error())
			return true
		}
		if RuleAllows(attrs, rule) {
			allowedBy = source
			return false
		}
		return true
	})
	if allowedBy != "" {
		return authorizer.DecisionAllow, "RBAC: allowed by " + allowedBy, nil
	}
	reason := ""
	if len(errs) > 0 {
		reason = "RBAC: " + strings.Join(errs, "; ")
	}
	return authorizer.DecisionNoOpinion, reason, nil
}

// ConditionsAwareAuthorize implements authorizer.Authorizer; RBAC decisions
// carry no conditions.
func (a *Authorizer) ConditionsAwareAuthorize(ctx context.Context, attrs authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(a.Authorize(ctx, attrs))
}

// EvaluateConditions implements authorizer.Authorizer.
func (a *Authorizer) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}

// RulesFor implements authorizer.RuleResolver for SelfSubjectRulesReview:
// the user's rules cluster-wide and in namespace. A binding to a missing
// role makes the answer incomplete.
func (a *Authorizer) RulesFor(_ context.Context, u user.Info, namespace string) ([]authorizer.ResourceRuleInfo, []authorizer.NonResourceRuleInfo, bool, error) {
	rules, errs := a.Rules(u, namespace)
	var res []authorizer.ResourceRuleInfo
	var nonRes []authorizer.NonResourceRuleInfo
	for _, r := range rules {
		if len(r.Resources) > 0 {
			res = append(res, &authorizer.DefaultResourceRuleInfo{Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
		}
		if len(r.NonResourceURLs) > 0 {
			nonRes = append(nonRes, &authorizer.DefaultNonResourceRuleInfo{Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
		}
	}
	var err error
	if len(errs) > 0 {
		err = fmt.Errorf("%v", errs)
	}
	return res, nonRes, len(errs) > 0, err
}
