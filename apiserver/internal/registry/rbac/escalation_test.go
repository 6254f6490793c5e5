package rbac

import (
	"context"
	"errors"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// fakeRules holds each user's rules and the cluster's roles.
type fakeRules struct {
	held  map[string][]rbacv1.PolicyRule
	roles map[string][]rbacv1.PolicyRule
}

func (f fakeRules) UserRules(_ context.Context, u user.Info, _ string) ([]rbacv1.PolicyRule, error) {
	return f.held[u.GetName()], nil
}

func (f fakeRules) RoleRefRules(ref rbacv1.RoleRef, _ string) ([]rbacv1.PolicyRule, error) {
	r, ok := f.roles[ref.Kind+"/"+ref.Name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: rbacv1.GroupName, Resource: "roles"}, ref.Name)
	}
	return r, nil
}

// verbAuthorizer allows exactly the listed "user verb resource/name" tuples.
type verbAuthorizer map[string]bool

func (v verbAuthorizer) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if v[a.GetUser().GetName()+" "+a.GetVerb()+" "+a.GetResource()+"/"+a.GetName()] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func (v verbAuthorizer) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(v.Authorize(ctx, a))
}

func (v verbAuthorizer) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", errors.New("unsupported")
}

func TestEscalationChecks(t *testing.T) {
	readPods := rbacv1.PolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	getPods := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	secrets := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}}
	g := &Guard{
		Authorizer: verbAuthorizer{"esc escalate roles/": true, "binder bind clusterroles/admin": true},
		Rules: fakeRules{
			held:  map[string][]rbacv1.PolicyRule{"alice": {readPods}},
			roles: map[string][]rbacv1.PolicyRule{"Role/pod-getter": {getPods}, "ClusterRole/admin": {secrets}},
		},
	}
	ctxFor := func(name string, groups ...string) context.Context {
		ctx := genericapirequest.WithUser(context.Background(), &user.DefaultInfo{Name: name, Groups: groups})
		return genericapirequest.WithNamespace(ctx, "demo")
	}
	ref := func(kind, name string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}
	}
	for _, tc := range []struct {
		name string
		err  error
		want func(error) bool
	}{
		{"role within held rules", g.CheckRole(ctxFor("alice"), "roles", "demo", "r", []rbacv1.PolicyRule{getPods}), nil},
		{"role beyond held rules", g.CheckRole(ctxFor("alice"), "roles", "demo", "r", []rbacv1.PolicyRule{secrets}), apierrors.IsForbidden},
		{"role with escalate verb", g.CheckRole(ctxFor("esc"), "roles", "demo", "r", []rbacv1.PolicyRule{secrets}), nil},
		{"role by system:masters", g.CheckRole(ctxFor("root", user.SystemPrivilegedGroup), "clusterroles", "", "r", []rbacv1.PolicyRule{secrets}), nil},
		{"binding to a held role", g.CheckBinding(ctxFor("alice"), "rolebindings", "demo", "b", ref("Role", "pod-getter")), nil},
		{"binding to a role not held", g.CheckBinding(ctxFor("alice"), "rolebindings", "demo", "b", ref("ClusterRole", "admin")), apierrors.IsForbidden},
		{"binding with bind verb", g.CheckBinding(ctxFor("binder"), "rolebindings", "demo", "b", ref("ClusterRole", "admin")), nil},
		{"binding to a missing role", g.CheckBinding(ctxFor("alice"), "rolebindings", "demo", "b", ref("Role", "nope")), apierrors.IsNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			switch {
			case tc.want == nil && tc.err != nil:
				t.Errorf("unexpected error: %v", tc.err)
			case tc.want != nil && !tc.want(tc.err):
				t.Errorf("error = %v, want another kind", tc.err)
			}
		})
	}
	t.Run("message names the missing rule", func(t *testing.T) {
		err := g.CheckRole(ctxFor("alice"), "roles", "demo", "r", []rbacv1.PolicyRule{secrets})
		const want = `roles.rbac.authorization.k8s.io "r" is forbidden: user "alice" (groups=[]) is attempting to grant RBAC permissions not currently held:
{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`
		if err == nil || err.Error() != want {
			t.Errorf("error = %v\nwant %s", err, want)
		}
	})
}
