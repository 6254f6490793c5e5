package rbac

import (
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"trireme.dev/apiserver/internal/registry"
)

func newFn[T any, P interface {
	*T
	runtime.Object
}]() func() runtime.Object {
	return func() runtime.Object { return P(new(T)) }
}

// Resources returns the descriptors of the four RBAC resources.
func Resources() []*registry.Resource {
	gv := rbacv1.SchemeGroupVersion
	return []*registry.Resource{
		{GroupVersion: gv, Name: "roles", Kind: "Role", New: newFn[rbacv1.Role](), NewList: newFn[rbacv1.RoleList](), Namespaced: true},
		{GroupVersion: gv, Name: "rolebindings", Kind: "RoleBinding", New: newFn[rbacv1.RoleBinding](), NewList: newFn[rbacv1.RoleBindingList](), Namespaced: true},
		{GroupVersion: gv, Name: "clusterroles", Kind: "ClusterRole", New: newFn[rbacv1.ClusterRole](), NewList: newFn[rbacv1.ClusterRoleList]()},
		{GroupVersion: gv, Name: "clusterrolebindings", Kind: "ClusterRoleBinding", New: newFn[rbacv1.ClusterRoleBinding](), NewList: newFn[rbacv1.ClusterRoleBindingList]()},
	}
}
