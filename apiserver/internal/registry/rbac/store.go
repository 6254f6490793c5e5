package rbac

import (
	"context"

	rbacv1 "k8s.io/api/rbac/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	"trireme.dev/apiserver/internal/registry"
)

// guardedStore checks every create, and every update that changes what the
// object grants, before the store writes it.
type guardedStore struct {
	*registry.Store
	// check returns the guard's verdict on writing obj.
	check func(ctx context.Context, obj runtime.Object) error
	// grants returns what an update must leave unchanged to skip the check:
	// rules for roles, subjects for bindings (whose roleRef is immutable).
	grants func(obj runtime.Object) any
}

// Create implements rest.Creater.
func (s *guardedStore) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	if err := s.check(ctx, obj); err != nil {
		return nil, err
	}
	return s.Store.Create(ctx, obj, createValidation, options)
}

// Update implements rest.Updater. The check runs on the merged object, after
// patches are applied, so a patch cannot sneak rules past it.
func (s *guardedStore) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	guarded := rest.WrapUpdatedObjectInfo(objInfo, func(ctx context.Context, obj, old runtime.Object) (runtime.Object, error) {
		if old != nil && apiequality.Semantic.DeepEqual(s.grants(obj), s.grants(old)) {
			return obj, nil
		}
		return obj, s.check(ctx, obj)
	})
	return s.Store.Update(ctx, name, guarded, createValidation, updateValidation, forceAllowCreate, options)
}

// Guarded wraps the RBAC stores in stores so that writes pass g's checks.
func Guarded(stores map[string]*registry.Store, g *Guard) map[string]rest.Storage {
	out := map[string]rest.Storage{}
	if s := stores["roles"]; s != nil {
		out["roles"] = &guardedStore{Store: s,
			check: func(ctx context.Context, obj runtime.Object) error {
				r := obj.(*rbacv1.Role)
				return g.CheckRole(ctx, "roles", r.Namespace, r.Name, r.Rules)
			},
			grants: func(obj runtime.Object) any { return obj.(*rbacv1.Role).Rules }}
	}
	if s := stores["clusterroles"]; s != nil {
		out["clusterroles"] = &guardedStore{Store: s,
			check: func(ctx context.Context, obj runtime.Object) error {
				r := obj.(*rbacv1.ClusterRole)
				return g.CheckRole(ctx, "clusterroles", "", r.Name, r.Rules)
			},
			grants: func(obj runtime.Object) any {
				r := obj.(*rbacv1.ClusterRole)
				return []any{r.Rules, r.AggregationRule}
			}}
	}
	if s := stores["rolebindings"]; s != nil {
		out["rolebindings"] = &guardedStore{Store: s,
			check: func(ctx context.Context, obj runtime.Object) error {
				b := obj.(*rbacv1.RoleBinding)
				return g.CheckBinding(ctx, "rolebindings", b.Namespace, b.Name, b.RoleRef)
			},
			grants: func(obj runtime.Object) any {
				b := obj.(*rbacv1.RoleBinding)
				return []any{b.RoleRef, b.Subjects}
			}}
	}
	if s := stores["clusterrolebindings"]; s != nil {
		out["clusterrolebindings"] = &guardedStore{Store: s,
			check: func(ctx context.Context, obj runtime.Object) error {
				b := obj.(*rbacv1.ClusterRoleBinding)
				return g.CheckBinding(ctx, "clusterrolebindings", "", b.Name, b.RoleRef)
			},
			grants: func(obj runtime.Object) any {
				b := obj.(*rbacv1.ClusterRoleBinding)
				return []any{b.RoleRef, b.Subjects}
			}}
	}
	return out
}
