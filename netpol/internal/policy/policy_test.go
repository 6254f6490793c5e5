package policy

import (
	"fmt"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

func TestTypes(t *testing.T) {
	egressRule := []networkingv1.NetworkPolicyEgressRule{{}}
	tests := []struct {
		name                string
		spec                networkingv1.NetworkPolicySpec
		wantIngress, wantEg bool
	}{
		{"defaults to ingress", networkingv1.NetworkPolicySpec{}, true, false},
		{"egress rules add egress", networkingv1.NetworkPolicySpec{Egress: egressRule}, true, true},
		{"explicit egress only", networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}}, false, true},
		{"explicit ingress ignores egress rules", networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, Egress: egressRule}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, eg := Types(&networkingv1.NetworkPolicy{Spec: tt.spec})
			if in != tt.wantIngress || eg != tt.wantEg {
				t.Errorf("Types = %v, %v; want %v, %v", in, eg, tt.wantIngress, tt.wantEg)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	addr := netip.MustParseAddr
	pods := []*Pod{
		{Namespace: "a", Name: "web", Node: "n1", Labels: map[string]string{"app": "web"}, IPs: []netip.Addr{addr("10.0.0.1")}, Ports: []NamedPort{{"http", corev1.ProtocolTCP, 8080}}},
		{Namespace: "a", Name: "db", Node: "n2", Labels: map[string]string{"app": "db"}, IPs: []netip.Addr{addr("10.0.1.1")}, Ports: []NamedPort{{"sql", corev1.ProtocolTCP, 5432}}},
		{Namespace: "b", Name: "db", Node: "n2", Labels: map[string]string{"app": "db"}, IPs: []netip.Addr{addr("10.0.1.2")}, Ports: []NamedPort{{"sql", corev1.ProtocolTCP, 6432}}},
		{Namespace: "b", Name: "host", Node: "n1", Labels: map[string]string{"app": "db"}, HostNetwork: true, IPs: []netip.Addr{addr("192.168.0.1")}},
	}
	nss := map[string]map[string]string{"a": {"team": "x"}, "b": {"team": "y"}}
	np := func(spec networkingv1.NetworkPolicySpec) *networkingv1.NetworkPolicy {
		return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p"}, Spec: spec}
	}
	db := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
	teamY := &metav1.LabelSelector{MatchLabels: map[string]string{"team": "y"}}
	bad := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Sometimes"}}}
	tests := []struct {
		name         string
		spec         networkingv1.NetworkPolicySpec
		wantPeers    []string
		wantNamed    []Endpoint
		wantProblems int
	}{
		{name: "podSelector alone: the policy's namespace", spec: networkingv1.NetworkPolicySpec{Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{PodSelector: db}}}}}, wantPeers: []string{"10.0.1.1"}},
		{name: "namespaceSelector alone: all its pods but host network", spec: networkingv1.NetworkPolicySpec{Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: teamY}}}}}, wantPeers: []string{"10.0.1.2"}},
		{name: "both: that namespace's selected pods", spec: networkingv1.NetworkPolicySpec{Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{}, PodSelector: db}}}}}, wantPeers: []string{"10.0.1.1", "10.0.1.2"}},
		{name: "named egress port resolved per destination", spec: networkingv1.NetworkPolicySpec{Egress: []networkingv1.NetworkPolicyEgressRule{{
			To:    []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{}, PodSelector: db}},
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromString("sql"))}},
		}}}, wantPeers: []string{"10.0.1.1", "10.0.1.2"}, wantNamed: []Endpoint{{addr("10.0.1.1"), corev1.ProtocolTCP, 5432}, {addr("10.0.1.2"), corev1.ProtocolTCP, 6432}}},
		{name: "a selector that does not parse selects nothing, said once", spec: networkingv1.NetworkPolicySpec{Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{{PodSelector: bad}}}}}, wantProblems: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Resolve(&State{Node: "n1", Pods: pods, Namespaces: nss, Policies: []*networkingv1.NetworkPolicy{np(tt.spec)}})
			if len(res.Problems) != tt.wantProblems {
				t.Errorf("problems %q, want %d", res.Problems, tt.wantProblems)
			}
			if len(res.Pods) != 1 || res.Pods[0].Pod.Name != "web" || !res.Pods[0].IngressIsolated || !res.Pods[0].EgressIsolated {
				t.Fatalf("policed pods: want only a/web, both directions; got %+v", res.Pods)
			}
			rule := res.Pods[0].Egress[0]
			var peers []string
			for _, ps := range rule.PeerSets {
				for _, a := range ps.Addrs {
					peers = append(peers, a.String())
				}
			}
			if fmtSlice(peers) != fmtSlice(tt.wantPeers) {
				t.Errorf("peers %v, want %v", peers, tt.wantPeers)
			}
			if fmtSlice(rule.NamedDest) != fmtSlice(tt.wantNamed) {
				t.Errorf("named destinations %v, want %v", rule.NamedDest, tt.wantNamed)
			}
		})
	}
}

func fmtSlice[T any](s []T) string { return fmt.Sprint(s) }
