package bootstrappolicy

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
)

// NamespaceRoles are the default Roles, keyed by namespace.
func NamespaceRoles() map[string][]rbacv1.Role {
	return map[string][]rbacv1.Role{
		"kube-system": {
			// Delegated authentication reads the client CA and front-proxy
			// settings the apiserver publishes here.
			role("kube-system", "extension-apiserver-authentication-reader",
				allow(read...).in(core).on("configmaps").named("extension-apiserver-authentication")),
			role("kube-system", "system::leader-locking-kube-controller-manager",
				allow("watch").in(core).on("configmaps"),
				allow("get", "update").in(core).on("configmaps").named("kube-controller-manager")),
			role("kube-system", "system::leader-locking-kube-scheduler",
				allow("watch").in(core).on("configmaps"),
				allow("get", "update").in(core).on("configmaps").named("kube-scheduler")),
			role("kube-system", ControllerRolePrefix+"bootstrap-signer",
				allow(read...).in(core).on("secrets")),
			role("kube-system", ControllerRolePrefix+"cloud-provider",
				allow("create", "get", "list", "watch").in(core).on("configmaps")),
			role("kube-system", ControllerRolePrefix+"token-cleaner",
				allow("delete", "get", "list", "watch").in(core).on("secrets"),
				eventsRule()),
		},
		"kube-public": {
			// Signs the cluster-info ConfigMap joining nodes read.
			role("kube-public", ControllerRolePrefix+"bootstrap-signer",
				allow(read...).in(core).on("configmaps"),
				allow("update").in(core).on("configmaps").named("cluster-info"),
				eventsRule()),
		},
	}
}

// NamespaceRoleBindings are the default RoleBindings, keyed by namespace.
func NamespaceRoleBindings() map[string][]rbacv1.RoleBinding {
	return map[string][]rbacv1.RoleBinding{
		"kube-system": {
			roleBinding("kube-system", "system::extension-apiserver-authentication-reader", "extension-apiserver-authentication-reader",
				users(controllerManagerUser, schedulerUser)...),
			roleBinding("kube-system", "system::leader-locking-kube-controller-manager", "system::leader-locking-kube-controller-manager",
				append(users(controllerManagerUser), serviceAccount("kube-system", "kube-controller-manager"))...),
			roleBinding("kube-system", "system::leader-locking-kube-scheduler", "system::leader-locking-kube-scheduler",
				append(users(schedulerUser), serviceAccount("kube-system", "kube-scheduler"))...),
			roleBinding("kube-system", ControllerRolePrefix+"bootstrap-signer", ControllerRolePrefix+"bootstrap-signer",
				serviceAccount("kube-system", "bootstrap-signer")),
			roleBinding("kube-system", ControllerRolePrefix+"cloud-provider", ControllerRolePrefix+"cloud-provider",
				serviceAccount("kube-system", "cloud-provider")),
			roleBinding("kube-system", ControllerRolePrefix+"token-cleaner", ControllerRolePrefix+"token-cleaner",
				serviceAccount("kube-system", "token-cleaner")),
		},
		"kube-public": {
			roleBinding("kube-public", ControllerRolePrefix+"bootstrap-signer", ControllerRolePrefix+"bootstrap-signer",
				serviceAccount("kube-system", "bootstrap-signer")),
		},
	}
}

func role(namespace, name string, rs ...rule) rbacv1.Role {
	return rbacv1.Role{ObjectMeta: meta(name, namespace, nil), Rules: rules(rs...)}
}

func roleBinding(namespace, name, roleName string, subjects ...rbacv1.Subject) rbacv1.RoleBinding {
	return rbacv1.RoleBinding{ObjectMeta: meta(name, namespace, nil),
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: roleName},
		Subjects: subjects}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
