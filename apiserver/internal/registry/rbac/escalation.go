package rbac

import (
	"context"
	"fmt"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	rbacvalidation "k8s.io/component-helpers/auth/rbac/validation"
)

// RuleResolver finds the rules a user holds and the rules a role grants.
type RuleResolver interface {
	// UserRules returns u's rules cluster-wide and in namespace; on error the
	// rules found so far are still returned.
	UserRules(ctx context.Context, u user.Info, namespace string) ([]rbacv1.PolicyRule, error)
	// RoleRefRules returns the rules of the role ref names, for a binding in
	// namespace ("" for cluster bindings).
	RoleRefRules(ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error)
}

// Guard performs the escalation and bind checks.
type Guard struct {
	// Authorizer answers the escalate and bind verb checks.
	Authorizer authorizer.Authorizer
	// Rules resolves held and granted rules.
	Rules RuleResolver
}

// privileged reports whether the requester is a superuser, which the
// apiserver's own loopback client also is.
func privileged(u user.Info) bool {
	for _, g := range u.GetGroups() {
		if g == user.SystemPrivilegedGroup {
			return true
		}
	}
	return false
}

// CheckRole allows writing a role with rules (of resource "roles" or
// "clusterroles", named name, in namespace) if the requester holds the rules
// or may escalate on it.
func (g *Guard) CheckRole(ctx context.Context, resource, namespace, name string, rules []rbacv1.PolicyRule) error {
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return apierrors.NewForbidden(rbacv1.Resource(resource), name, fmt.Errorf("no user on request"))
	}
	if privileged(u) || g.allowed(ctx, u, "escalate", resource, namespace, requestName(ctx)) {
		return nil
	}
	if err := g.confirmNoEscalation(ctx, u, namespace, rules); err != nil {
		return apierrors.NewForbidden(rbacv1.Resource(resource), name, err)
	}
	return nil
}

// CheckBinding allows writing a binding (of resource "rolebindings" or
// "clusterrolebindings") to ref if the requester may bind the role or holds
// all its rules.
func (g *Guard) CheckBinding(ctx context.Context, resource, namespace, name string, ref rbacv1.RoleRef) error {
	u, ok := genericapirequest.UserFrom(ctx)
	if !ok {
		return apierrors.NewForbidden(rbacv1.Resource(resource), name, fmt.Errorf("no user on request"))
	}
	if privileged(u) {
		return nil
	}
	roleResource := "clusterroles"
	if ref.Kind == "Role" {
		roleResource = "roles"
	}
	if ref.APIGroup == rbacv1.GroupName && g.allowed(ctx, u, "bind", roleResource, namespace, ref.Name) {
		return nil
	}
	rules, err := g.Rules.RoleRefRules(ref, namespace)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return apierrors.NewNotFound(schema.GroupResource{Group: rbacv1.GroupName, Resource: roleResource}, ref.Name)
		}
		return apierrors.NewInternalError(fmt.Errorf("resolve %s %q: %w", ref.Kind, ref.Name, err))
	}
	if err := g.confirmNoEscalation(ctx, u, namespace, rules); err != nil {
		return apierrors.NewForbidden(rbacv1.Resource(resource), name, err)
	}
	return nil
}

func (g *Guard) allowed(ctx context.Context, u user.Info, verb, resource, namespace, name string) bool {
	d, _, err := g.Authorizer.Authorize(ctx, authorizer.AttributesRecord{
		User: u, Verb: verb, APIGroup: rbacv1.GroupName, APIVersion: "*",
		Resource: resource, Namespace: namespace, Name: name, ResourceRequest: true,
	})
	return err == nil && d == authorizer.DecisionAllow
}

func requestName(ctx context.Context) string {
	if info, ok := genericapirequest.RequestInfoFrom(ctx); ok {
		return info.Name
	}
	return ""
}

// confirmNoEscalation fails unless u's rules in namespace cover rules,
// naming what is missing as upstream's message does.
func (g *Guard) confirmNoEscalation(ctx context.Context, u user.Info, namespace string, rules []rbacv1.PolicyRule) error {
	held, resolveErr := g.Rules.UserRules(ctx, u, namespace)
	covered, missing := rbacvalidation.Covers(held, rules)
	if covered {
		return nil
	}
	descs := make([]string, 0, len(missing))
	seen := map[string]bool{}
	for _, m := range missing {
		d := describe(m)
		if !seen[d] {
			seen[d] = true
			descs = append(descs, d)
		}
	}
	sort.Strings(descs)
	msg := fmt.Sprintf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n%s", u.GetName(), u.GetGroups(), strings.Join(descs, "\n"))
	if resolveErr != nil {
		msg += fmt.Sprintf("; resolution errors: %v", resolveErr)
	}
	return fmt.Errorf("%s", msg)
}

// describe prints a rule compactly, listing only the fields it sets.
func describe(r rbacv1.PolicyRule) string {
	var parts []string
	add := func(name string, vals []string) {
		if len(vals) == 0 {
			return
		}
		q := make([]string, len(vals))
		for i, v := range vals {
			q[i] = fmt.Sprintf("%q", v)
		}
		parts = append(parts, name+":["+strings.Join(q, " ")+"]")
	}
	add("APIGroups", r.APIGroups)
	add("Resources", r.Resources)
	add("ResourceNames", r.ResourceNames)
	add("NonResourceURLs", r.NonResourceURLs)
	add("Verbs", r.Verbs)
	return "{" + strings.Join(parts, ", ") + "}"
}
