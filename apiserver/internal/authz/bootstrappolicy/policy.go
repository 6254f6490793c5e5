package bootstrappolicy

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// Policy is the whole default policy.
type Policy struct {
	ClusterRoles        []rbacv1.ClusterRole
	ClusterRoleBindings []rbacv1.ClusterRoleBinding
	// Roles and RoleBindings are keyed by namespace.
	Roles        map[string][]rbacv1.Role
	RoleBindings map[string][]rbacv1.RoleBinding
}

// Default returns the default policy: fresh objects on every call, so a
// caller may change them.
func Default() Policy {
	return Policy{
		ClusterRoles:        append(ClusterRoles(), ControllerRoles()...),
		ClusterRoleBindings: append(ClusterRoleBindings(), ControllerRoleBindings()...),
		Roles:               NamespaceRoles(),
		RoleBindings:        NamespaceRoleBindings(),
	}
}
