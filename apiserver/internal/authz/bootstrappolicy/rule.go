package bootstrappolicy

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Verb sets shared by many roles.
var (
	read      = []string{"get", "list", "watch"}
	write     = []string{"create", "delete", "deletecollection", "patch", "update"}
	readWrite = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
)

// API group names used by the rules.
const (
	core           = ""
	apps           = "apps"
	authentication = "authentication.k8s.io"
	authorization  = "authorization.k8s.io"
	autoscaling    = "autoscaling"
	batch          = "batch"
	certificates   = "certificates.k8s.io"
	coordination   = "coordination.k8s.io"
	discovery      = "discovery.k8s.io"
	events         = "events.k8s.io"
	extensions     = "extensions"
	networking     = "networking.k8s.io"
	node           = "node.k8s.io"
	policy         = "policy"
	rbac           = rbacv1.GroupName
	resource       = "resource.k8s.io"
	scheduling     = "scheduling.k8s.io"
	storage        = "storage.k8s.io"
	admissionReg   = "admissionregistration.k8s.io"
	metrics        = "metrics.k8s.io"
	customMetrics  = "custom.metrics.k8s.io"
	externalMetric = "external.metrics.k8s.io"
)

// BootstrapLabel marks every object of the default policy, as upstream
// labels them, so operators can tell them apart from their own.
var BootstrapLabel = map[string]string{"kubernetes.io/bootstrapping": "rbac-defaults"}

// AutoUpdateAnnotation on a default object set to "false" stops the
// reconcile from changing it.
const AutoUpdateAnnotation = "rbac.authorization.kubernetes.io/autoupdate"

// rule is a PolicyRule being written: allow(verbs).in(groups).on(resources).
type rule rbacv1.PolicyRule

func allow(verbs ...string) rule { return rule{Verbs: verbs} }

func (r rule) in(groups ...string) rule   { r.APIGroups = groups; return r }
func (r rule) on(res ...string) rule      { r.Resources = res; return r }
func (r rule) named(names ...string) rule { r.ResourceNames = names; return r }
func (r rule) urls(urls ...string) rule   { r.NonResourceURLs = urls; return r }

// rules converts the written rules.
func rules(rs ...rule) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, len(rs))
	for i, r := range rs {
		out[i] = rbacv1.PolicyRule(r)
	}
	return out
}

// eventsRule lets a component record Events through either Event API.
func eventsRule() rule { return allow("create", "update", "patch").in(core, events).on("events") }

func clusterRole(name string, rs ...rule) rbacv1.ClusterRole {
	return rbacv1.ClusterRole{ObjectMeta: meta(name, "", nil), Rules: rules(rs...)}
}

func labeled(cr rbacv1.ClusterRole, labels map[string]string) rbacv1.ClusterRole {
	for k, v := range labels {
		cr.Labels[k] = v
	}
	return cr
}

// aggregated is a ClusterRole whose rules the aggregation controller fills
// from the ClusterRoles labelled label=true.
func aggregated(name, label string) rbacv1.ClusterRole {
	cr := clusterRole(name)
	cr.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
		{MatchLabels: map[string]string{label: "true"}},
	}}
	return cr
}

func meta(name, namespace string, extra map[string]string) metav1.ObjectMeta {
	labels := map[string]string{}
	for k, v := range BootstrapLabel {
		labels[k] = v
	}
	for k, v := range extra {
		labels[k] = v
	}
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels,
		Annotations: map[string]string{AutoUpdateAnnotation: "true"}}
}

// Subject constructors.
func users(names ...string) []rbacv1.Subject {
	return subjects(rbacv1.UserKind, rbacv1.GroupName, names)
}

func groups(names ...string) []rbacv1.Subject {
	return subjects(rbacv1.GroupKind, rbacv1.GroupName, names)
}

func subjects(kind, group string, names []string) []rbacv1.Subject {
	out := make([]rbacv1.Subject, len(names))
	for i, n := range names {
		out[i] = rbacv1.Subject{Kind: kind, APIGroup: group, Name: n}
	}
	return out
}

func serviceAccount(namespace, name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: name}
}

func clusterBinding(role string, subjects ...[]rbacv1.Subject) rbacv1.ClusterRoleBinding {
	b := rbacv1.ClusterRoleBinding{ObjectMeta: meta(role, "", nil),
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}}
	for _, s := range subjects {
		b.Subjects = append(b.Subjects, s...)
	}
	return b
}
