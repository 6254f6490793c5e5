package authz

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/auth/rbac/reconciliation"

	"trireme.dev/apiserver/internal/authz/bootstrappolicy"
)

// PolicyHookName is the post-start hook that keeps the default RBAC policy.
const PolicyHookName = "rbac/bootstrap-roles"

// AddPolicyHook registers the post-start hook that reconciles the default
// RBAC policy through client at every start: missing objects are created,
// missing rules and subjects added, and objects annotated
// rbac.authorization.kubernetes.io/autoupdate=false left alone. Extra rules
// and subjects an operator added are kept, as upstream does.
//
// The hook also waits until resolver (the RBAC authorizer's view of the
// policy) grants the admin group cluster-admin, so that once the server is
// ready the dev-mode admin.kubeconfig works.
func AddPolicyHook(srv *genericapiserver.GenericAPIServer, client kubernetes.Interface, resolver authorizer.Authorizer) error {
	return srv.AddPostStartHook(PolicyHookName, func(hc genericapiserver.PostStartHookContext) error {
		log := logr.FromContextOrDiscard(hc).WithName("rbac-bootstrap")
		var last error
		// The loopback API may refuse requests for a moment after start.
		err := wait.PollUntilContextTimeout(hc, time.Second, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			last = ReconcilePolicy(client, bootstrappolicy.Default(), log)
			if last != nil {
				log.V(2).Info("Retrying default RBAC policy", "err", last)
			}
			return last == nil, nil
		})
		if err != nil {
			return fmt.Errorf("reconcile default RBAC policy: %w (last error: %v)", err, last)
		}
		admin := authorizer.AttributesRecord{
			User: &user.DefaultInfo{Name: "kubernetes-admin", Groups: []string{bootstrappolicy.AdminGroup, user.AllAuthenticated}},
			Verb: "list", Resource: "namespaces", ResourceRequest: true,
		}
		err = wait.PollUntilContextTimeout(hc, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			d, _, _ := resolver.Authorize(ctx, admin)
			return d == authorizer.DecisionAllow, nil
		})
		if err != nil {
			return fmt.Errorf("wait for the RBAC cache to hold the default policy: %w", err)
		}
		return nil
	})
}

// ReconcilePolicy brings the cluster's copy of p up to date.
func ReconcilePolicy(client kubernetes.Interface, p bootstrappolicy.Policy, log logr.Logger) error {
	rbacClient, nsClient := client.RbacV1(), client.CoreV1().Namespaces()
	for i := range p.ClusterRoles {
		opts := reconciliation.ReconcileRoleOptions{
			Role:    reconciliation.ClusterRoleRuleOwner{ClusterRole: &p.ClusterRoles[i]},
			Client:  reconciliation.ClusterRoleModifier{Client: rbacClient.ClusterRoles()},
			Confirm: true,
		}
		if err := logRole(opts, "ClusterRole", log); err != nil {
			return err
		}
	}
	for i := range p.ClusterRoleBindings {
		opts := reconciliation.ReconcileRoleBindingOptions{
			RoleBinding: reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: &p.ClusterRoleBindings[i]},
			Client:      reconciliation.ClusterRoleBindingClientAdapter{Client: rbacClient.ClusterRoleBindings()},
			Confirm:     true,
		}
		if err := logBinding(opts, "ClusterRoleBinding", log); err != nil {
			return err
		}
	}
	for _, roles := range p.Roles {
		for i := range roles {
			opts := reconciliation.ReconcileRoleOptions{
				Role:    reconciliation.RoleRuleOwner{Role: &roles[i]},
				Client:  reconciliation.RoleModifier{Client: rbacClient, NamespaceClient: nsClient},
				Confirm: true,
			}
			if err := logRole(opts, "Role", log); err != nil {
				return err
			}
		}
	}
	for _, bindings := range p.RoleBindings {
		for i := range bindings {
			opts := reconciliation.ReconcileRoleBindingOptions{
				RoleBinding: reconciliation.RoleBindingAdapter{RoleBinding: &bindings[i]},
				Client:      reconciliation.RoleBindingClientAdapter{Client: rbacClient, NamespaceClient: nsClient},
				Confirm:     true,
			}
			if err := logBinding(opts, "RoleBinding", log); err != nil {
				return err
			}
		}
	}
	return nil
}

func logRole(opts reconciliation.ReconcileRoleOptions, kind string, log logr.Logger) error {
	name := opts.Role.GetNamespace() + "/" + opts.Role.GetName()
	res, err := opts.Run()
	if err != nil {
		return fmt.Errorf("reconcile %s %s: %w", kind, name, err)
	}
	switch {
	case res.Protected && res.Operation != reconciliation.ReconcileNone:
		log.Info("Default RBAC object left as edited (autoupdate=false)", "kind", kind, "name", name, "missingRules", len(res.MissingRules))
	case res.Operation != reconciliation.ReconcileNone:
		log.V(2).Info("Reconciled default RBAC object", "kind", kind, "name", name, "operation", res.Operation)
	}
	return nil
}

func logBinding(opts reconciliation.ReconcileRoleBindingOptions, kind string, log logr.Logger) error {
	name := opts.RoleBinding.GetNamespace() + "/" + opts.RoleBinding.GetName()
	res, err := opts.Run()
	if err != nil {
		return fmt.Errorf("reconcile %s %s: %w", kind, name, err)
	}
	switch {
	case res.Protected && res.Operation != reconciliation.ReconcileNone:
		log.Info("Default RBAC object left as edited (autoupdate=false)", "kind", kind, "name", name, "missingSubjects", len(res.MissingSubjects))
	case res.Operation != reconciliation.ReconcileNone:
		log.V(2).Info("Reconciled default RBAC object", "kind", kind, "name", name, "operation", res.Operation)
	}
	return nil
}
