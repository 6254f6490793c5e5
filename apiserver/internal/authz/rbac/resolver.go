package rbac

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
)

// SubjectIndex is the name of the index, on the RoleBinding and
// ClusterRoleBinding informers, by the keys of subjectKeys.
const SubjectIndex = "trireme-rbac-subject"

// Indexers returns the indexers the binding informers need.
func Indexers() cache.Indexers {
	return cache.Indexers{SubjectIndex: indexBySubject}
}

// indexBySubject keys a binding by who it names: "u:<user>" or "g:<group>",
// prefixed by the namespace for RoleBindings. A service account subject is
// keyed by the user name the account authenticates as.
func indexBySubject(obj any) ([]string, error) {
	var ns string
	var subjects []rbacv1.Subject
	switch b := obj.(type) {
	case *rbacv1.RoleBinding:
		ns, subjects = b.Namespace, b.Subjects
	case *rbacv1.ClusterRoleBinding:
		subjects = b.Subjects
	default:
		return nil, fmt.Errorf("index by subject: unexpected %T", obj)
	}
	keys := make([]string, 0, len(subjects))
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			keys = append(keys, ns+"/u:"+s.Name)
		case rbacv1.GroupKind:
			keys = append(keys, ns+"/g:"+s.Name)
		case rbacv1.ServiceAccountKind:
			saNS := s.Namespace
			if saNS == "" {
				saNS = ns
			}
			if saNS != "" {
				keys = append(keys, ns+"/u:"+serviceaccount.MakeUsername(saNS, s.Name))
			}
		}
	}
	return keys, nil
}

// Resolver finds the rules that apply to a user.
type Resolver struct {
	roles               rbaclisters.RoleLister
	clusterRoles        rbaclisters.ClusterRoleLister
	roleBindings        cache.Indexer
	clusterRoleBindings cache.Indexer
}

// NewResolver returns a resolver reading the given caches; the binding
// indexers must carry Indexers().
func NewResolver(roles rbaclisters.RoleLister, clusterRoles rbaclisters.ClusterRoleLister, roleBindings, clusterRoleBindings cache.Indexer) *Resolver {
	return &Resolver{roles: roles, clusterRoles: clusterRoles, roleBindings: roleBindings, clusterRoleBindings: clusterRoleBindings}
}

// visitor receives each rule that applies, with the binding that grants it,
// or an error resolving a binding; it returns false to stop.
type visitor func(source string, rule *rbacv1.PolicyRule, err error) bool

// visitRules calls visit with every rule granted to u cluster-wide and, when
// namespace is set, in that namespace.
func (r *Resolver) visitRules(u user.Info, namespace string, visit visitor) {
	keys := subjectKeys(u)
	seen := map[string]bool{}
	for _, k := range keys {
		objs, err := r.clusterRoleBindings.ByIndex(SubjectIndex, "/"+k)
		if err != nil {
			if !visit("", nil, err) {
				return
			}
			continue
		}
		for _, o := range objs {
			b := o.(*rbacv1.ClusterRoleBinding)
			if seen[b.Name] {
				continue
			}
			seen[b.Name] = true
			if !r.visitRef(b.RoleRef, "", "ClusterRoleBinding "+b.Name, visit) {
				return
			}
		}
	}
	if namespace == "" {
		return
	}
	for _, k := range keys {
		objs, err := r.roleBindings.ByIndex(SubjectIndex, namespace+"/"+k)
		if err != nil {
			if !visit("", nil, err) {
				return
			}
			continue
		}
		for _, o := range objs {
			b := o.(*rbacv1.RoleBinding)
			if seen["/"+b.Name] {
				continue
			}
			seen["/"+b.Name] = true
			if !r.visitRef(b.RoleRef, namespace, "RoleBinding "+namespace+"/"+b.Name, visit) {
				return
			}
		}
	}
}

func (r *Resolver) visitRef(ref rbacv1.RoleRef, namespace, source string, visit visitor) bool {
	rules, err := r.RoleRefRules(ref, namespace)
	if err != nil {
		return visit(source, nil, err)
	}
	for i := range rules {
		if !visit(source, &rules[i], nil) {
			return false
		}
	}
	return true
}

// RoleRefRules returns the rules of the role ref points at; namespace is the
// binding's ("" for ClusterRoleBindings).
func (r *Resolver) RoleRefRules(ref rbacv1.RoleRef, namespace string) ([]rbacv1.PolicyRule, error) {
	switch ref.Kind {
	case "ClusterRole":
		cr, err := r.clusterRoles.Get(ref.Name)
		if err != nil {
			return nil, err
		}
		return cr.Rules, nil
	case "Role":
		role, err := r.roles.Roles(namespace).Get(ref.Name)
		if err != nil {
			return nil, err
		}
		return role.Rules, nil
	}
	return nil, apierrors.NewBadRequest(fmt.Sprintf("unsupported role reference kind: %q", ref.Kind))
}

// Rules returns every rule granted to u cluster-wide and in namespace, and
// the errors met resolving bindings (a binding to a missing role).
func (r *Resolver) Rules(u user.Info, namespace string) ([]rbacv1.PolicyRule, []error) {
	var rules []rbacv1.PolicyRule
	var errs []error
	r.visitRules(u, namespace, func(_ string, rule *rbacv1.PolicyRule, err error) bool {
		if err != nil {
			errs = append(errs, err)
		} else {
			rules = append(rules, *rule)
		}
		return true
	})
	return rules, errs
}

// UserRules returns the rules of u as the escalation checks of the RBAC
// registry need them, failing when a binding could not be resolved.
func (r *Resolver) UserRules(_ context.Context, u user.Info, namespace string) ([]rbacv1.PolicyRule, error) {
	rules, errs := r.Rules(u, namespace)
	if len(errs) > 0 {
		return rules, fmt.Errorf("%v", errs)
	}
	return rules, nil
}

// subjectKeys are the index keys (without namespace) that can name u.
func subjectKeys(u user.Info) []string {
	groups := u.GetGroups()
	keys := make([]string, 0, len(groups)+1)
	keys = append(keys, "u:"+u.GetName())
	for _, g := range groups {
		keys = append(keys, "g:"+g)
	}
	return keys
}
