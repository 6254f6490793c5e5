package bootstrappolicy

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"trireme.dev/api/validation"
)

func TestDefaultPolicyIsValidAndConsistent(t *testing.T) {
	p := Default()
	roles := map[string]bool{}
	for i := range p.ClusterRoles {
		cr := &p.ClusterRoles[i]
		t.Run("clusterrole "+cr.Name, func(t *testing.T) {
			if roles[cr.Name] {
				t.Fatalf("defined twice")
			}
			roles[cr.Name] = true
			if errs := validation.ValidateCreate(cr); len(errs) > 0 {
				t.Errorf("invalid: %v", errs)
			}
			if cr.Labels["kubernetes.io/bootstrapping"] != "rbac-defaults" || cr.Annotations[AutoUpdateAnnotation] != "true" {
				t.Errorf("missing bootstrap label or autoupdate annotation: %v %v", cr.Labels, cr.Annotations)
			}
		})
	}
	bindings := map[string]bool{}
	for i := range p.ClusterRoleBindings {
		b := &p.ClusterRoleBindings[i]
		t.Run("clusterrolebinding "+b.Name, func(t *testing.T) {
			if bindings[b.Name] {
				t.Fatalf("defined twice")
			}
			bindings[b.Name] = true
			if errs := validation.ValidateCreate(b); len(errs) > 0 {
				t.Errorf("invalid: %v", errs)
			}
			if !roles[b.RoleRef.Name] {
				t.Errorf("binds missing ClusterRole %q", b.RoleRef.Name)
			}
		})
	}
	for ns, rs := range p.Roles {
		for i := range rs {
			if errs := validation.ValidateCreate(&rs[i]); len(errs) > 0 || rs[i].Namespace != ns {
				t.Errorf("role %s/%s: %v", ns, rs[i].Name, errs)
			}
		}
	}
	for ns, bs := range p.RoleBindings {
		for i := range bs {
			b := &bs[i]
			if errs := validation.ValidateCreate(b); len(errs) > 0 || b.Namespace != ns {
				t.Errorf("rolebinding %s/%s: %v", ns, b.Name, errs)
			}
			found := false
			for _, r := range p.Roles[ns] {
				found = found || r.Name == b.RoleRef.Name
			}
			if !found {
				t.Errorf("rolebinding %s/%s binds missing Role %q", ns, b.Name, b.RoleRef.Name)
			}
		}
	}
}

func TestWellKnownGrants(t *testing.T) {
	p := Default()
	subjectsOf := func(name string) []rbacv1.Subject {
		for _, b := range p.ClusterRoleBindings {
			if b.Name == name {
				return b.Subjects
			}
		}
		t.Fatalf("no binding %s", name)
		return nil
	}
	for _, tc := range []struct {
		binding, kind, name string
	}{
		{"cluster-admin", "Group", "system:masters"},
		{"kubeadm:cluster-admins", "Group", "kubeadm:cluster-admins"},
		{"system:public-info-viewer", "Group", "system:unauthenticated"},
		{"system:public-info-viewer", "Group", "system:authenticated"},
		{"system:basic-user", "Group", "system:authenticated"},
		{"system:kube-scheduler", "User", "system:kube-scheduler"},
		{"system:controller:job-controller", "ServiceAccount", "job-controller"},
		{"system:controller:clusterrole-aggregation-controller", "ServiceAccount", "clusterrole-aggregation-controller"},
	} {
		t.Run(tc.binding+" binds "+tc.name, func(t *testing.T) {
			for _, s := range subjectsOf(tc.binding) {
				if s.Kind == tc.kind && s.Name == tc.name && (s.Kind != "ServiceAccount" || s.Namespace == "kube-system") {
					return
				}
			}
			t.Errorf("subjects %v lack %s %s", subjectsOf(tc.binding), tc.kind, tc.name)
		})
	}
	t.Run("system:node is bound to nobody", func(t *testing.T) {
		if s := subjectsOf("system:node"); len(s) != 0 {
			t.Errorf("subjects = %v", s)
		}
	})
	t.Run("aggregation chain", func(t *testing.T) {
		labels := map[string]map[string]string{}
		for _, cr := range p.ClusterRoles {
			labels[cr.Name] = cr.Labels
		}
		for role, label := range map[string]string{"edit": aggregateToAdmin, "view": aggregateToEdit, "system:aggregate-to-view": aggregateToView, "system:aggregate-to-admin": aggregateToAdmin} {
			if labels[role][label] != "true" {
				t.Errorf("%s lacks %s=true", role, label)
			}
		}
	})
	t.Run("controller roles are prefixed", func(t *testing.T) {
		for _, cr := range ControllerRoles() {
			if !strings.HasPrefix(cr.Name, ControllerRolePrefix) {
				t.Errorf("%s", cr.Name)
			}
		}
	})
}
