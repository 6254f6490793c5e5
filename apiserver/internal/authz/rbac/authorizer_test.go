package rbac

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
)

// fixture builds an authorizer over in-memory caches.
type fixture struct {
	roles, clusterRoles, roleBindings, clusterRoleBindings cache.Indexer
}

func newFixture() *fixture {
	nsIdx := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	rbIdx := Indexers()
	rbIdx[cache.NamespaceIndex] = cache.MetaNamespaceIndexFunc
	return &fixture{
		roles:               cache.NewIndexer(cache.MetaNamespaceKeyFunc, nsIdx),
		clusterRoles:        cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}),
		roleBindings:        cache.NewIndexer(cache.MetaNamespaceKeyFunc, rbIdx),
		clusterRoleBindings: cache.NewIndexer(cache.MetaNamespaceKeyFunc, Indexers()),
	}
}

func (f *fixture) authorizer() *Authorizer {
	return New(NewResolver(rbaclisters.NewRoleLister(f.roles), rbaclisters.NewClusterRoleLister(f.clusterRoles), f.roleBindings, f.clusterRoleBindings))
}

func (f *fixture) add(objs ...any) {
	for _, o := range objs {
		var err error
		switch o.(type) {
		case *rbacv1.Role:
			err = f.roles.Add(o)
		case *rbacv1.ClusterRole:
			err = f.clusterRoles.Add(o)
		case *rbacv1.RoleBinding:
			err = f.roleBindings.Add(o)
		case *rbacv1.ClusterRoleBinding:
			err = f.clusterRoleBindings.Add(o)
		}
		if err != nil {
			panic(err)
		}
	}
}

func role(ns, name string, rules ...rbacv1.PolicyRule) *rbacv1.Role {
	return &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules}
}

func clusterRole(name string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
}

func roleBinding(ns, name, kind, roleName string, subjects ...rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: roleName}, Subjects: subjects}
}

func group(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
}

func userSubject(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
}

func rule(verbs []string, group string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: []string{group}, Resources: resources}
}

func TestAuthorize(t *testing.T) {
	f := newFixture()
	f.add(
		role("demo", "pod-reader", rule([]string{"get", "list"}, "", "pods")),
		clusterRole("view", rule([]string{"get"}, "apps", "deployments")),
		clusterRole("urls", rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/version"}}),
		roleBinding("demo", "dev-pods", "Role", "pod-reader", group("dev")),
		roleBinding("demo", "alice-view", "ClusterRole", "view", userSubject("alice")),
		roleBinding("demo", "robot", "Role", "pod-reader", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "robot"}),
		roleBinding("demo", "dangling", "Role", "missing", group("dev")),
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "urls"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "urls"}, Subjects: []rbacv1.Subject{group("system:authenticated")}},
	)
	a := f.authorizer()
	dev := &user.DefaultInfo{Name: "carol", Groups: []string{"dev", "system:authenticated"}}
	alice := &user.DefaultInfo{Name: "alice", Groups: []string{"system:authenticated"}}
	robot := &user.DefaultInfo{Name: "system:serviceaccount:demo:robot"}
	for _, tc := range []struct {
		name  string
		attrs authorizer.AttributesRecord
		want  authorizer.Decision
	}{
		{"group rolebinding grants in its namespace", authorizer.AttributesRecord{User: dev, Verb: "list", Namespace: "demo", Resource: "pods", ResourceRequest: true}, authorizer.DecisionAllow},
		{"rolebinding does not reach other namespaces", authorizer.AttributesRecord{User: dev, Verb: "list", Namespace: "other", Resource: "pods", ResourceRequest: true}, authorizer.DecisionNoOpinion},
		{"rolebinding does not grant cluster-wide", authorizer.AttributesRecord{User: dev, Verb: "list", Resource: "pods", ResourceRequest: true}, authorizer.DecisionNoOpinion},
		{"verb not in role", authorizer.AttributesRecord{User: dev, Verb: "delete", Namespace: "demo", Resource: "pods", Name: "x", ResourceRequest: true}, authorizer.DecisionNoOpinion},
		{"clusterrole through rolebinding", authorizer.AttributesRecord{User: alice, Verb: "get", Namespace: "demo", APIGroup: "apps", Resource: "deployments", Name: "web", ResourceRequest: true}, authorizer.DecisionAllow},
		{"user binding does not apply to others", authorizer.AttributesRecord{User: dev, Verb: "get", Namespace: "demo", APIGroup: "apps", Resource: "deployments", Name: "web", ResourceRequest: true}, authorizer.DecisionNoOpinion},
		{"service account subject with binding namespace", authorizer.AttributesRecord{User: robot, Verb: "get", Namespace: "demo", Resource: "pods", ResourceRequest: true}, authorizer.DecisionAllow},
		{"clusterrolebinding for a group", authorizer.AttributesRecord{User: alice, Verb: "get", Path: "/version"}, authorizer.DecisionAllow},
		{"no binding for path", authorizer.AttributesRecord{User: robot, Verb: "get", Path: "/version"}, authorizer.DecisionNoOpinion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason, err := a.Authorize(context.Background(), tc.attrs)
			if err != nil || got != tc.want {
				t.Errorf("Authorize = %v (%q, %v), want %v", got, reason, err, tc.want)
			}
		})
	}
	t.Run("rules for a user list bindings and report a dangling role", func(t *testing.T) {
		res, nonRes, incomplete, err := a.RulesFor(context.Background(), dev, "demo")
		if len(res) != 1 || len(nonRes) != 1 || !incomplete || err == nil {
			t.Errorf("RulesFor = %d resource rules, %d non-resource rules, incomplete %v, err %v; want 1, 1, true, an error", len(res), len(nonRes), incomplete, err)
		}
	})
}

// BenchmarkAuthorizeManyBindings measures a decision with 1,000 Roles and
// 1,000 RoleBindings loaded in one namespace, each binding naming its own
// user and a shared group, as issue 3's performance target describes.
func BenchmarkAuthorizeManyBindings(b *testing.B) {
	f := newFixture()
	for i := 0; i < 1000; i++ {
		f.add(
			role("bench", fmt.Sprintf("role-%d", i), rule([]string{"get", "list"}, "", fmt.Sprintf("things%d", i)), rule([]string{"get"}, "apps", "deployments")),
			roleBinding("bench", fmt.Sprintf("binding-%d", i), "Role", fmt.Sprintf("role-%d", i), userSubject(fmt.Sprintf("user-%d", i)), group(fmt.Sprintf("team-%d", i%10))),
		)
	}
	a := f.authorizer()
	u := &user.DefaultInfo{Name: "user-500", Groups: []string{"team-3", "system:authenticated"}}
	for _, bc := range []struct {
		name  string
		attrs authorizer.AttributesRecord
	}{
		{"allowed", authorizer.AttributesRecord{User: u, Verb: "list", Namespace: "bench", Resource: "things500", ResourceRequest: true}},
		{"denied", authorizer.AttributesRecord{User: u, Verb: "delete", Namespace: "bench", Resource: "secrets", Name: "x", ResourceRequest: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, _, err := a.Authorize(ctx, bc.attrs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
