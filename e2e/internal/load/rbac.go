package load

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// seedRBAC creates n Roles and n RoleBindings in the run's namespace, each
// binding one role to a user of its own, spread over the workers. They
// grant the measuring identity nothing: they are there so that the
// authorizer has a realistically crowded namespace to look through.
func (r *runner) seedRBAC(ctx context.Context, n int) error {
	start := time.Now()
	g, ctx := errgroup.WithContext(ctx)
	for w, worker := range r.workers {
		g.Go(func() error {
			rbac := worker.cs.RbacV1()
			for i := w; i < n; i += len(r.workers) {
				name := fmt.Sprintf("apiload-%d", i)
				meta := metav1.ObjectMeta{Name: name, Labels: map[string]string{runLabel: r.run}}
				role := &rbacv1.Role{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{{
					APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{name}, Verbs: []string{"get", "update"},
				}}}
				if _, err := rbac.Roles(r.ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
					return fmt.Errorf("create role %s: %w", name, err)
				}
				binding := &rbacv1.RoleBinding{ObjectMeta: meta,
					RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
					Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}},
				}
				if _, err := rbac.RoleBindings(r.ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
					return fmt.Errorf("create rolebinding %s: %w", name, err)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("seed rbac: %w", err)
	}
	fmt.Fprintf(r.out, "rbac: %d Roles and %d RoleBindings in %s created in %s\n", n, n, r.ns, time.Since(start).Round(time.Millisecond))
	return nil
}
