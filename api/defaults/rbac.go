package defaults

import (
	rbacv1 "k8s.io/api/rbac/v1"
)

// RoleBinding points a roleRef without a group at RBAC, the only group a
// role can come from, and fills each subject's group.
func RoleBinding(rb *rbacv1.RoleBinding) {
	roleRef(&rb.RoleRef)
	subjects(rb.Subjects)
}

// ClusterRoleBinding defaults as RoleBinding does.
func ClusterRoleBinding(crb *rbacv1.ClusterRoleBinding) {
	roleRef(&crb.RoleRef)
	subjects(crb.Subjects)
}

func roleRef(r *rbacv1.RoleRef) {
	if r.APIGroup == "" {
		r.APIGroup = rbacv1.GroupName
	}
}

// subjects gives users and groups the RBAC group and service accounts the
// core group, as the API names where each kind of subject is defined.
func subjects(ss []rbacv1.Subject) {
	for i := range ss {
		s := &ss[i]
		if s.APIGroup != "" {
			continue
		}
		switch s.Kind {
		case rbacv1.UserKind, rbacv1.GroupKind:
			s.APIGroup = rbacv1.GroupName
		case rbacv1.ServiceAccountKind:
			s.APIGroup = ""
		}
	}
}
