package policy_test

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/knftables"

	"trireme.dev/netpol/internal/policy"
	"trireme.dev/netpol/internal/ruleset"
)

// FuzzResolve feeds policies with arbitrary selectors, blocks and ports
// (what a client could store were validation to miss something) through
// resolving and rendering: never a panic, and never a rule that names a
// protocol or address family the table cannot hold.
func FuzzResolve(f *testing.F) {
	f.Add("app", "In", "web", "10.0.0.0/8", "10.1.0.0/16", "TCP", "http", int32(80), int32(0))
	f.Add("", "Sometimes", "", "fd00::/8", "bad", "ICMP", "", int32(70000), int32(-1))
	f.Fuzz(func(t *testing.T, key, op, value, cidr, except, proto, portName string, port, endPort int32) {
		peer := networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: metav1.LabelSelectorOperator(op), Values: []string{value}}}}}
		block := networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: cidr, Except: []string{except}}}
		p := corev1.Protocol(proto)
		named, numbered := intstr.FromString(portName), intstr.FromInt32(port)
		ports := []networkingv1.NetworkPolicyPort{{Protocol: &p, Port: &named}, {Protocol: &p, Port: &numbered, EndPort: &endPort}}
		np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}, Spec: networkingv1.NetworkPolicySpec{
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{peer, block}, Ports: ports}},
			Egress:  []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{peer, block}, Ports: ports}},
		}}
		s := &policy.State{Node: "n", Namespaces: map[string]map[string]string{"ns": {key: value}}, Policies: []*networkingv1.NetworkPolicy{np},
			Pods: []*policy.Pod{{Namespace: "ns", Name: "a", Node: "n", Labels: map[string]string{key: value}, IPs: []netip.Addr{netip.MustParseAddr("10.0.0.1")},
				Ports: []policy.NamedPort{{Name: portName, Protocol: p, Port: port}}}}}
		res := policy.Resolve(s)
		res.Allows(policy.Flow{Src: netip.MustParseAddr("10.0.0.2"), Dst: netip.MustParseAddr("10.0.0.1"), Protocol: p, Port: port})
		fake := knftables.NewFake(ruleset.Family, ruleset.Table)
		if _, err := (&ruleset.Writer{NFT: fake}).Sync(t.Context(), ruleset.Render(res)); err != nil {
			t.Fatalf("render: %v", err)
		}
		for _, line := range strings.Split(fake.Dump(), "\n") {
			if strings.Contains(line, "add rule") && (strings.Contains(line, "::") || strings.Contains(line, strings.ToLower(proto)+" dport") && p != corev1.ProtocolTCP && p != corev1.ProtocolUDP && p != corev1.ProtocolSCTP) {
				t.Errorf("rule the table cannot hold: %s", line)
			}
			for _, f := range strings.Fields(line) {
				if n, err := strconv.Atoi(f); err == nil && (n < 0 || n > 65535) && strings.Contains(line, "dport") {
					t.Errorf("port out of range: %s", line)
				}
			}
		}
	})
}
