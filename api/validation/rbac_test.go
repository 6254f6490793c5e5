package validation

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestRBACKinds(t *testing.T) {
	nsMeta := metav1.ObjectMeta{Name: "system:pod-reader", Namespace: "team"}
	clMeta := metav1.ObjectMeta{Name: "system:controller:job-controller"}
	podRule := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	urlRule := rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}
	user := rbacv1.Subject{Kind: "User", APIGroup: rbacv1.GroupName, Name: "alice"}
	sa := rbacv1.Subject{Kind: "ServiceAccount", Name: "default"}
	roleRef := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "reader"}
	clusterRef := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}
	for _, tc := range []struct {
		name string
		errs field.ErrorList
		want []want
	}{
		{"role with colon name", ValidateCreate(&rbacv1.Role{ObjectMeta: nsMeta, Rules: []rbacv1.PolicyRule{podRule}}), nil},
		{"role name with slash", ValidateCreate(&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "a/b", Namespace: "team"}}), []want{invalid("metadata.name")}},
		{"role rule without verbs", ValidateCreate(&rbacv1.Role{ObjectMeta: nsMeta, Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}}}}), []want{required("rules[0].verbs")}},
		{"role rule without groups and resources", ValidateCreate(&rbacv1.Role{ObjectMeta: nsMeta, Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}}}}), []want{required("rules[0].apiGroups"), required("rules[0].resources")}},
		{"role with non-resource url", ValidateCreate(&rbacv1.Role{ObjectMeta: nsMeta, Rules: []rbacv1.PolicyRule{urlRule}}), []want{invalid("rules[0].nonResourceURLs")}},
		{"clusterrole with non-resource url", ValidateCreate(&rbacv1.ClusterRole{ObjectMeta: clMeta, Rules: []rbacv1.PolicyRule{urlRule, podRule}}), nil},
		{"clusterrole mixing urls and resources", ValidateCreate(&rbacv1.ClusterRole{ObjectMeta: clMeta, Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/x"}, Resources: []string{"pods"}}}}), []want{invalid("rules[0].nonResourceURLs")}},
		{"clusterrole empty aggregation", ValidateCreate(&rbacv1.ClusterRole{ObjectMeta: clMeta, AggregationRule: &rbacv1.AggregationRule{}}), []want{required("aggregationRule.clusterRoleSelectors")}},
		{"clusterrole bad selector", ValidateCreate(&rbacv1.ClusterRole{ObjectMeta: clMeta, AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"a": "not ok"}}}}}),
			[]want{invalid("aggregationRule.clusterRoleSelectors[0].matchLabels"), invalid("aggregationRule.clusterRoleSelectors[0]")}},
		{"rolebinding ok", ValidateCreate(&rbacv1.RoleBinding{ObjectMeta: nsMeta, RoleRef: roleRef, Subjects: []rbacv1.Subject{user, sa}}), nil},
		{"rolebinding bad ref", ValidateCreate(&rbacv1.RoleBinding{ObjectMeta: nsMeta, RoleRef: rbacv1.RoleRef{APIGroup: "x", Kind: "Pod"}}),
			[]want{notSup("roleRef.apiGroup"), notSup("roleRef.kind"), required("roleRef.name")}},
		{"rolebinding bad subjects", ValidateCreate(&rbacv1.RoleBinding{ObjectMeta: nsMeta, RoleRef: roleRef, Subjects: []rbacv1.Subject{
			{Kind: "User", Name: "bob"}, {Kind: "ServiceAccount", APIGroup: "rbac.authorization.k8s.io", Name: "Bad_Name"}, {Kind: "Robot", Name: "r2"}, {Kind: "Group"},
		}}), []want{notSup("subjects[0].apiGroup"), invalid("subjects[1].name"), notSup("subjects[1].apiGroup"), notSup("subjects[2].kind"), required("subjects[3].name"), notSup("subjects[3].apiGroup")}},
		{"clusterrolebinding role kind", ValidateCreate(&rbacv1.ClusterRoleBinding{ObjectMeta: clMeta, RoleRef: roleRef}), []want{notSup("roleRef.kind")}},
		{"clusterrolebinding sa needs namespace", ValidateCreate(&rbacv1.ClusterRoleBinding{ObjectMeta: clMeta, RoleRef: clusterRef, Subjects: []rbacv1.Subject{sa}}), []want{required("subjects[0].namespace")}},
	} {
		t.Run(tc.name, func(t *testing.T) { expectErrs(t, tc.errs, tc.want...) })
	}
}

func TestRoleBindingRoleRefImmutable(t *testing.T) {
	old := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "team", ResourceVersion: "1"},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "a"}}
	b := old.DeepCopy()
	b.RoleRef.Name = "other"
	expectErrs(t, ValidateUpdate(b, old), invalid("roleRef"))
}
