package authz

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"trireme.dev/apiserver/internal/authz/bootstrappolicy"
)

func TestReconcilePolicy(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset()
	if err := ReconcilePolicy(client, bootstrappolicy.Default(), logr.Discard()); err != nil {
		t.Fatalf("first reconcile: %v", err)
	}
	roles := client.RbacV1().ClusterRoles()
	get := func(name string) *rbacv1.ClusterRole {
		cr, err := roles.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cr
	}
	// An operator strips a default role, adds a rule to another, and opts a
	// third out of updates.
	stripped := get("system:basic-user")
	stripped.Rules = nil
	extended := get("view")
	extended.Rules = append(extended.Rules, rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{"example.com"}, Resources: []string{"widgets"}})
	pinned := get("system:discovery")
	pinned.Rules = nil
	pinned.Annotations[bootstrappolicy.AutoUpdateAnnotation] = "false"
	for _, cr := range []*rbacv1.ClusterRole{stripped, extended, pinned} {
		if _, err := roles.Update(ctx, cr, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := client.RbacV1().ClusterRoleBindings().Delete(ctx, "cluster-admin", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ReconcilePolicy(client, bootstrappolicy.Default(), logr.Discard()); err != nil {
		t.Fatalf("second reconcile: %v", err)
	}
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"stripped default rules are restored", len(get("system:basic-user").Rules) > 0},
		{"operator's extra rules are kept", len(get("view").Rules) == 1},
		{"autoupdate=false is respected", len(get("system:discovery").Rules) == 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.ok {
				t.Error("not so")
			}
		})
	}
	t.Run("deleted binding is recreated", func(t *testing.T) {
		if _, err := client.RbacV1().ClusterRoleBindings().Get(ctx, "cluster-admin", metav1.GetOptions{}); err != nil {
			t.Error(err)
		}
	})
	t.Run("namespaced roles are created", func(t *testing.T) {
		if _, err := client.RbacV1().Roles("kube-public").Get(ctx, "system:controller:bootstrap-signer", metav1.GetOptions{}); err != nil {
			t.Error(err)
		}
	})
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		modes   []string
		webhook string
		wantErr bool
	}{
		{"default", []string{"Node", "RBAC"}, "", false},
		{"always allow", []string{"AlwaysAllow"}, "", false},
		{"unknown mode", []string{"ABAC"}, "", true},
		{"duplicate", []string{"RBAC", "RBAC"}, "", true},
		{"webhook without config", []string{"Webhook"}, "", true},
		{"config without webhook", []string{"RBAC"}, "/x", true},
		{"webhook with config", []string{"RBAC", "Webhook"}, "/x", false},
		{"empty", nil, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			o.Modes, o.WebhookConfigFile = tc.modes, tc.webhook
			if errs := o.Validate(); (len(errs) > 0) != tc.wantErr {
				t.Errorf("Validate = %v, wantErr %v", errs, tc.wantErr)
			}
		})
	}
}
