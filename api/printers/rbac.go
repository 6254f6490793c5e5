package printers

import (
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Roles and ClusterRoles have no printer of their own: upstream shows them
// with the default Name and Created At columns.

var roleBindingColumns = columns(
	nameCol(),
	col("Role", typeString, rbacv1.RoleBinding{}.SwaggerDoc()["roleRef"]),
	ageCol(),
	wide("Users", typeString, "Users in the roleBinding"),
	wide("Groups", typeString, "Groups in the roleBinding"),
	wide("ServiceAccounts", typeString, "ServiceAccounts in the roleBinding"),
)

var clusterRoleBindingColumns = columns(
	nameCol(),
	col("Role", typeString, rbacv1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"]),
	ageCol(),
	wide("Users", typeString, "Users in the clusterRoleBinding"),
	wide("Groups", typeString, "Groups in the clusterRoleBinding"),
	wide("ServiceAccounts", typeString, "ServiceAccounts in the clusterRoleBinding"),
)

func roleBindingCells(rb *rbacv1.RoleBinding, now time.Time) []any {
	return bindingCells(rb.Name, rb.RoleRef, rb.Subjects, age(rb, now))
}

func clusterRoleBindingCells(crb *rbacv1.ClusterRoleBinding, now time.Time) []any {
	return bindingCells(crb.Name, crb.RoleRef, crb.Subjects, age(crb, now))
}

func bindingCells(name string, ref rbacv1.RoleRef, subjects []rbacv1.Subject, age string) []any {
	var users, groups, sas []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		case rbacv1.ServiceAccountKind:
			sas = append(sas, s.Namespace+":"+s.Name)
		}
	}
	return []any{name, ref.Kind + "/" + ref.Name, age, strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", ")}
}
