package policy

import (
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cnp "sigs.k8s.io/network-policy-api/apis/v1beta1"
)

// TestTiers checks the order of evaluation: Admin tier by priority (Accept
// and Deny decide, Pass goes on), then NetworkPolicy for the pods it
// isolates, then the Baseline tier, then allow.
func TestTiers(t *testing.T) {
	web, client := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.1.1")
	pods := []*Pod{
		{Namespace: "prod", Name: "web", Node: "n1", Labels: map[string]string{"app": "web"}, IPs: []netip.Addr{web}},
		{Namespace: "dev", Name: "client", Node: "n2", Labels: map[string]string{"app": "client"}, IPs: []netip.Addr{client}},
	}
	nss := map[string]map[string]string{"prod": {"env": "prod"}, "dev": {"env": "dev"}}
	prod := cnp.ClusterNetworkPolicySubject{Namespaces: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}
	fromDev := []cnp.ClusterNetworkPolicyIngressPeer{{Namespaces: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}}}
	rule := func(action cnp.ClusterNetworkPolicyRuleAction) []cnp.ClusterNetworkPolicyIngressRule {
		return []cnp.ClusterNetworkPolicyIngressRule{{Action: action, From: fromDev}}
	}
	c := func(name string, tier cnp.Tier, prio int32, action cnp.ClusterNetworkPolicyRuleAction) *cnp.ClusterNetworkPolicy {
		return &cnp.ClusterNetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: cnp.ClusterNetworkPolicySpec{Tier: tier, Priority: prio, Subject: prod, Ingress: rule(action)}}
	}
	denyAll := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "deny"}}
	allowAll := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "allow"}, Spec: networkingv1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{}}}}
	tests := []struct {
		name     string
		cluster  []*cnp.ClusterNetworkPolicy
		policies []*networkingv1.NetworkPolicy
		want     bool
	}{
		{"nothing: allowed", nil, nil, true},
		{"admin deny beats a NetworkPolicy that allows", []*cnp.ClusterNetworkPolicy{c("d", cnp.AdminTier, 1, "Deny")}, []*networkingv1.NetworkPolicy{allowAll}, false},
		{"admin accept beats a NetworkPolicy that denies", []*cnp.ClusterNetworkPolicy{c("a", cnp.AdminTier, 1, "Accept")}, []*networkingv1.NetworkPolicy{denyAll}, true},
		{"admin pass leaves it to the NetworkPolicy", []*cnp.ClusterNetworkPolicy{c("p", cnp.AdminTier, 1, "Pass"), c("d", cnp.AdminTier, 2, "Deny")}, []*networkingv1.NetworkPolicy{allowAll}, true},
		{"lower priority value first", []*cnp.ClusterNetworkPolicy{c("d", cnp.AdminTier, 2, "Deny"), c("a", cnp.AdminTier, 1, "Accept")}, nil, true},
		{"baseline deny when no NetworkPolicy isolates", []*cnp.ClusterNetworkPolicy{c("b", cnp.BaselineTier, 1, "Deny")}, nil, false},
		{"a NetworkPolicy overrides the baseline", []*cnp.ClusterNetworkPolicy{c("b", cnp.BaselineTier, 1, "Deny")}, []*networkingv1.NetworkPolicy{allowAll}, true},
		{"admin pass then baseline deny", []*cnp.ClusterNetworkPolicy{c("p", cnp.AdminTier, 1, "Pass"), c("b", cnp.BaselineTier, 1, "Deny")}, nil, false},
		{"an unknown action matches nothing", []*cnp.ClusterNetworkPolicy{c("x", cnp.AdminTier, 1, "Maybe")}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Resolve(&State{Node: "n1", Pods: pods, Namespaces: nss, Policies: tt.policies, ClusterPolicies: tt.cluster})
			got := res.Allows(Flow{Src: client, Dst: web, Protocol: corev1.ProtocolTCP, Port: 80})
			if got != tt.want {
				t.Errorf("client → web allowed = %v, want %v (problems %q)", got, tt.want, res.Problems)
			}
		})
	}
}
