package clusterroleaggregation

import (
	"context"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
)

func rule(verb, resource string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: []string{verb}, APIGroups: []string{""}, Resources: []string{resource}}
}

func role(name string, labels map[string]string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: rules}
}

func aggregated(name string, labels map[string]string, selectors ...map[string]string) *rbacv1.ClusterRole {
	r := role(name, labels)
	r.AggregationRule = &rbacv1.AggregationRule{}
	for _, s := range selectors {
		r.AggregationRule.ClusterRoleSelectors = append(r.AggregationRule.ClusterRoleSelectors, metav1.LabelSelector{MatchLabels: s})
	}
	return r
}

func start(t *testing.T, objs ...runtime.Object) (*Controller, *fake.Clientset, *record.FakeRecorder, context.Context) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	rec := record.NewFakeRecorder(10)
	c, err := New(Options{Client: client, ClusterRoles: factory.Rbac().V1().ClusterRoles(), Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return c, client, rec, ctx
}

func TestSync(t *testing.T) {
	view := map[string]string{"aggregate-to-view": "true"}
	edit := map[string]string{"aggregate-to-edit": "true"}
	tests := []struct {
		name    string
		objs    []runtime.Object
		want    []rbacv1.PolicyRule
		updates int
		event   string
	}{
		{
			name: "union of matching roles in name order",
			objs: []runtime.Object{
				aggregated("view", nil, view),
				role("b-pods", view, rule("get", "pods")),
				role("a-services", view, rule("list", "services")),
				role("unrelated", nil, rule("delete", "nodes")),
			},
			want:    []rbacv1.PolicyRule{rule("list", "services"), rule("get", "pods")},
			updates: 1,
		},
		{
			name: "a rule shared by two roles appears once",
			objs: []runtime.Object{
				aggregated("view", nil, view),
				role("a", view, rule("get", "pods")),
				role("b", view, rule("get", "pods"), rule("watch", "pods")),
			},
			want:    []rbacv1.PolicyRule{rule("get", "pods"), rule("watch", "pods")},
			updates: 1,
		},
		{
			name: "several selectors, a role matched twice counts once",
			objs: []runtime.Object{
				aggregated("edit", nil, view, edit),
				role("both", map[string]string{"aggregate-to-view": "true", "aggregate-to-edit": "true"}, rule("get", "secrets")),
				role("edit-only", edit, rule("create", "pods")),
			},
			want:    []rbacv1.PolicyRule{rule("get", "secrets"), rule("create", "pods")},
			updates: 1,
		},
		{
			name: "a role matching its own selector does not aggregate itself",
			objs: []runtime.Object{
				func() *rbacv1.ClusterRole {
					r := aggregated("view", view, view)
					r.Rules = []rbacv1.PolicyRule{rule("stale", "things")}
					return r
				}(),
				role("pods", view, rule("get", "pods")),
			},
			want:    []rbacv1.PolicyRule{rule("get", "pods")},
			updates: 1,
		},
		{
			name: "up-to-date rules are not written",
			objs: []runtime.Object{
				func() *rbacv1.ClusterRole {
					r := aggregated("view", nil, view)
					r.Rules = []rbacv1.PolicyRule{rule("get", "pods")}
					return r
				}(),
				role("pods", view, rule("get", "pods")),
			},
			want: []rbacv1.PolicyRule{rule("get", "pods")},
		},
		{
			name: "nothing matched empties the rules",
			objs: []runtime.Object{
				func() *rbacv1.ClusterRole {
					r := aggregated("view", nil, view)
					r.Rules = []rbacv1.PolicyRule{rule("get", "pods")}
					return r
				}(),
			},
			want:    []rbacv1.PolicyRule{},
			updates: 1,
		},
		{
			name: "a role without aggregation rule is left alone",
			objs: []runtime.Object{role("view", nil, rule("get", "pods")), role("pods", view, rule("list", "pods"))},
			want: []rbacv1.PolicyRule{rule("get", "pods")},
		},
		{
			name: "an invalid selector is reported as an event",
			objs: []runtime.Object{func() *rbacv1.ClusterRole {
				r := aggregated("view", nil)
				r.AggregationRule.ClusterRoleSelectors = []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}}}}
				return r
			}()},
			want:  nil,
			event: "InvalidAggregationRule",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, client, rec, ctx := start(t, tt.objs...)
			name := "view"
			if tt.objs[0].(*rbacv1.ClusterRole).Name == "edit" {
				name = "edit"
			}
			if err := c.sync(ctx, name); err != nil {
				t.Fatalf("sync: %v", err)
			}
			updates := 0
			for _, a := range client.Actions() {
				if a.GetVerb() == "update" {
					updates++
				}
			}
			if updates != tt.updates {
				t.Errorf("updates = %d, want %d", updates, tt.updates)
			}
			got, err := client.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(got.Rules, tt.want) {
				t.Errorf("rules = %v, want %v", got.Rules, tt.want)
			}
			select {
			case e := <-rec.Events:
				if tt.event == "" || !strings.Contains(e, tt.event) {
					t.Errorf("event %q, want %q", e, tt.event)
				}
			default:
				if tt.event != "" {
					t.Errorf("no event, want %q", tt.event)
				}
			}
		})
	}
}

func TestFollowsNewAndChangedRoles(t *testing.T) {
	view := map[string]string{"aggregate-to-view": "true"}
	c, client, _, ctx := start(t, aggregated("view", nil, view))
	go c.Run(ctx, 2)
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, role("crd-view", view, rule("get", "widgets")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForRules(t, ctx, client, []rbacv1.PolicyRule{rule("get", "widgets")})
	r, err := client.RbacV1().ClusterRoles().Get(ctx, "crd-view", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.Labels = nil
	if _, err := client.RbacV1().ClusterRoles().Update(ctx, r, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForRules(t, ctx, client, []rbacv1.PolicyRule{})
}

func waitForRules(t *testing.T, ctx context.Context, client *fake.Clientset, want []rbacv1.PolicyRule) {
	t.Helper()
	var last []rbacv1.PolicyRule
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		r, err := client.RbacV1().ClusterRoles().Get(ctx, "view", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = r.Rules
		return equality.Semantic.DeepEqual(r.Rules, want), nil
	})
	if err != nil {
		t.Fatalf("rules = %v, want %v", last, want)
	}
}
