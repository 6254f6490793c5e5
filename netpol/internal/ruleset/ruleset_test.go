package ruleset

import (
	"context"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"trireme.dev/componentbase/golden"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/knftables"
	cnp "sigs.k8s.io/network-policy-api/apis/v1beta1"

	"trireme.dev/netpol/internal/policy"
)

// cluster is two namespaces (prod, dev) with a web and a db pod in prod
// on this node, a client in dev on another node, a host-network pod, and
// a pod without an address yet.
func cluster(policies ...*networkingv1.NetworkPolicy) *policy.State {
	pod := func(ns, name, node string, ip string, lbl map[string]string, ports ...policy.NamedPort) *policy.Pod {
		p := &policy.Pod{Namespace: ns, Name: name, Node: node, Labels: lbl, Ports: ports}
		if ip != "" {
			p.IPs = []netip.Addr{netip.MustParseAddr(ip)}
		}
		return p
	}
	return &policy.State{
		Node:     "node-a",
		PodCIDRs: []netip.Prefix{netip.MustParsePrefix("10.244.0.0/24")},
		Namespaces: map[string]map[string]string{
			"prod": {"kubernetes.io/metadata.name": "prod", "env": "prod"},
			"dev":  {"kubernetes.io/metadata.name": "dev", "env": "dev"},
		},
		Pods: []*policy.Pod{
			pod("prod", "web", "node-a", "10.244.0.10", map[string]string{"app": "web"}, policy.NamedPort{Name: "http", Protocol: corev1.ProtocolTCP, Port: 8080}),
			pod("prod", "db", "node-a", "10.244.0.11", map[string]string{"app": "db"}, policy.NamedPort{Name: "sql", Protocol: corev1.ProtocolTCP, Port: 5432}),
			pod("dev", "client", "node-b", "10.244.1.20", map[string]string{"app": "client"}),
			{Namespace: "prod", Name: "agent", Node: "node-a", Labels: map[string]string{"app": "web"}, HostNetwork: true, IPs: []netip.Addr{netip.MustParseAddr("192.168.0.2")}},
			pod("prod", "pending", "node-a", "", map[string]string{"app": "web"}),
		},
		Policies: policies,
	}
}

func np(ns, name string, spec networkingv1.NetworkPolicySpec) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
}

func sel(kv ...string) *metav1.LabelSelector {
	s := &metav1.LabelSelector{MatchLabels: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		s.MatchLabels[kv[i]] = kv[i+1]
	}
	return s
}

func port(proto corev1.Protocol, p intstr.IntOrString, end ...int32) networkingv1.NetworkPolicyPort {
	np := networkingv1.NetworkPolicyPort{Protocol: &proto, Port: &p}
	if len(end) > 0 {
		np.EndPort = &end[0]
	}
	return np
}

// scenario is a set of policies over cluster().
type scenario struct {
	name     string
	policies []*networkingv1.NetworkPolicy
	cluster  []*cnp.ClusterNetworkPolicy
}

func (s scenario) state() *policy.State {
	st := cluster(s.policies...)
	st.ClusterPolicies = s.cluster
	return st
}

func cnpol(name string, tier cnp.Tier, priority int32, subject cnp.ClusterNetworkPolicySubject, ingress []cnp.ClusterNetworkPolicyIngressRule, egress []cnp.ClusterNetworkPolicyEgressRule) *cnp.ClusterNetworkPolicy {
	return &cnp.ClusterNetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: cnp.ClusterNetworkPolicySpec{Tier: tier, Priority: priority, Subject: subject, Ingress: ingress, Egress: egress}}
}

func scenarios() []scenario {
	return []scenario{
		{"no-policy", nil, nil},
		{"default-deny-ingress", []*networkingv1.NetworkPolicy{np("prod", "deny", networkingv1.NetworkPolicySpec{})}, nil},
		{"default-deny-both", []*networkingv1.NetworkPolicy{np("prod", "deny", networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}})}, nil},
		{"selectors", []*networkingv1.NetworkPolicy{np("prod", "db-from-web-and-dev", networkingv1.NetworkPolicySpec{
			PodSelector: *sel("app", "db"),
			Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{
				{PodSelector: sel("app", "web")},
				{NamespaceSelector: sel("env", "dev")},
				{NamespaceSelector: sel("env", "dev"), PodSelector: sel("app", "nothing")},
			}}},
		})}, nil},
		{"ipblock-ports", []*networkingv1.NetworkPolicy{np("prod", "web-ports", networkingv1.NetworkPolicySpec{
			PodSelector: *sel("app", "web"),
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.244.1.0/24", "10.9.0.0/16"}}}},
				Ports: []networkingv1.NetworkPolicyPort{
					port(corev1.ProtocolTCP, intstr.FromInt32(80)),
					port(corev1.ProtocolTCP, intstr.FromString("http")),
					port(corev1.ProtocolTCP, intstr.FromString("no-such-port")),
					port(corev1.ProtocolUDP, intstr.FromInt32(5000), 5100),
					port(corev1.ProtocolSCTP, intstr.FromInt32(9000)),
					{Protocol: ptr.To(corev1.ProtocolUDP)},
				},
			}},
		})}, nil},
		{"egress-named-and-dns", []*networkingv1.NetworkPolicy{np("prod", "web-egress", networkingv1.NetworkPolicySpec{
			PodSelector: *sel("app", "web"),
			Egress: []networkingv1.NetworkPolicyEgressRule{
				{To: []networkingv1.NetworkPolicyPeer{{PodSelector: sel("app", "db")}}, Ports: []networkingv1.NetworkPolicyPort{port(corev1.ProtocolTCP, intstr.FromString("sql"))}},
				{Ports: []networkingv1.NetworkPolicyPort{port(corev1.ProtocolUDP, intstr.FromInt32(53)), port(corev1.ProtocolTCP, intstr.FromInt32(53))}},
			},
		})}, nil},
		{"policies-add-up", []*networkingv1.NetworkPolicy{
			np("prod", "deny", networkingv1.NetworkPolicySpec{}),
			np("prod", "allow-web", networkingv1.NetworkPolicySpec{PodSelector: *sel("app", "web"), Ingress: []networkingv1.NetworkPolicyIngressRule{{}}}),
			np("dev", "other-namespace", networkingv1.NetworkPolicySpec{}),
		}, nil},
		{"cluster-tiers", []*networkingv1.NetworkPolicy{
			np("prod", "db-from-web", networkingv1.NetworkPolicySpec{PodSelector: *sel("app", "db"), Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: sel("app", "web")}}}}}),
		}, []*cnp.ClusterNetworkPolicy{
			cnpol("pass-prod-internal", cnp.AdminTier, 10, cnp.ClusterNetworkPolicySubject{Namespaces: sel("env", "prod")},
				[]cnp.ClusterNetworkPolicyIngressRule{{Action: cnp.ClusterNetworkPolicyRuleActionPass, From: []cnp.ClusterNetworkPolicyIngressPeer{{Namespaces: sel("env", "prod")}}}}, nil),
			cnpol("deny-dev", cnp.AdminTier, 20, cnp.ClusterNetworkPolicySubject{Namespaces: sel("env", "prod")},
				[]cnp.ClusterNetworkPolicyIngressRule{{Action: cnp.ClusterNetworkPolicyRuleActionDeny, From: []cnp.ClusterNetworkPolicyIngressPeer{{Namespaces: sel("env", "dev")}}}},
				[]cnp.ClusterNetworkPolicyEgressRule{
					{Action: cnp.ClusterNetworkPolicyRuleActionAccept, To: []cnp.ClusterNetworkPolicyEgressPeer{{Networks: []cnp.CIDR{"192.168.0.0/16"}}}, Protocols: []cnp.ClusterNetworkPolicyProtocol{{TCP: &cnp.ClusterNetworkPolicyProtocolTCP{DestinationPort: &cnp.Port{Number: 443}}}, {UDP: &cnp.ClusterNetworkPolicyProtocolUDP{DestinationPort: &cnp.Port{Range: &cnp.PortRange{Start: 5000, End: 5100}}}}}},
					{Action: cnp.ClusterNetworkPolicyRuleActionDeny, To: []cnp.ClusterNetworkPolicyEgressPeer{{DomainNames: []cnp.DomainName{"example.com"}}}},
				}),
			cnpol("baseline-web-named", cnp.BaselineTier, 5, cnp.ClusterNetworkPolicySubject{Pods: &cnp.NamespacedPod{PodSelector: *sel("app", "web")}},
				[]cnp.ClusterNetworkPolicyIngressRule{
					{Action: cnp.ClusterNetworkPolicyRuleActionAccept, From: []cnp.ClusterNetworkPolicyIngressPeer{{Pods: &cnp.NamespacedPod{PodSelector: *sel("app", "client")}}}, Protocols: []cnp.ClusterNetworkPolicyProtocol{{DestinationNamedPort: "http"}}},
					{Action: cnp.ClusterNetworkPolicyRuleActionDeny, From: []cnp.ClusterNetworkPolicyIngressPeer{{Namespaces: &metav1.LabelSelector{}}}},
				}, nil),
		}},
	}
}

func TestGolden(t *testing.T) {
	tests := scenarios()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := knftables.NewFake(Family, Table)
			w := &Writer{NFT: fake}
			if _, err := w.Sync(context.Background(), Render(policy.Resolve(tt.state()))); err != nil {
				t.Fatalf("sync: %v", err)
			}
			golden.Check(t, tt.name+".nft", fake.Dump())
		})
	}
}

// TestResync: whatever the table held, a sync (which writes only the
// difference) leaves it as a fresh one would, counters included; Reset
// rewrites it whole; Cleanup removes it.
func TestResync(t *testing.T) {
	ctx := context.Background()
	for _, from := range scenarios() {
		for _, to := range scenarios() {
			t.Run(from.name+"/"+to.name, func(t *testing.T) {
				fake := knftables.NewFake(Family, Table)
				w := &Writer{NFT: fake}
				if _, err := w.Sync(ctx, Render(policy.Resolve(from.state()))); err != nil {
					t.Fatal(err)
				}
				if _, err := w.Sync(ctx, Render(policy.Resolve(to.state()))); err != nil {
					t.Fatal(err)
				}
				fresh := knftables.NewFake(Family, Table)
				if _, err := (&Writer{NFT: fresh}).Sync(ctx, Render(policy.Resolve(to.state()))); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(sortedLines(fresh.Dump()), sortedLines(fake.Dump())); diff != "" {
					t.Fatalf("differs from a fresh table (-fresh +synced):\n%s", diff)
				}
				w.Reset()
				if _, err := w.Sync(ctx, Render(policy.Resolve(to.state()))); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(sortedLines(fresh.Dump()), sortedLines(fake.Dump())); diff != "" {
					t.Fatalf("a full rewrite differs from a fresh table (-fresh +synced):\n%s", diff)
				}
				if err := w.Cleanup(ctx); err != nil {
					t.Fatal(err)
				}
				if fake.Table != nil {
					t.Errorf("table left after Cleanup:\n%s", fake.Dump())
				}
			})
		}
	}
}

// sortedLines is a dump in an order of its own: elements added at other
// times list in other orders, with the same meaning.
func sortedLines(dump string) []string {
	lines := strings.Split(dump, "\n")
	slices.Sort(lines)
	return lines
}

// TestKernelTakesGolden hands every golden table to nft --check, which
// asks the kernel whether it would take it.
func TestKernelTakesGolden(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("nft --check needs root")
	}
	if _, err := exec.LookPath("nft"); err != nil {
		t.Fatal("nft not found: apt-get install -y nftables")
	}
	files, err := filepath.Glob("testdata/*.nft")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, f := range files {
		if out, err := exec.Command("nft", "--check", "-f", f).CombinedOutput(); err != nil {
			t.Errorf("%s: %v: %s", f, err, out)
		}
	}
}

// TestLogged: with a log group, every drop is preceded by a rate-limited
// NFLOG rule of the same match, and the kernel takes the table.
func TestLogged(t *testing.T) {
	var s scenario
	for _, sc := range scenarios() {
		if sc.name == "cluster-tiers" {
			s = sc
		}
	}
	fake := knftables.NewFake(Family, Table)
	if _, err := (&Writer{NFT: fake}).Sync(context.Background(), RenderLogged(policy.Resolve(s.state()), 7)); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "logged.nft", fake.Dump())
	lines := strings.Split(fake.Dump(), "\n")
	for i, l := range lines {
		if strings.HasSuffix(l, " drop") && !strings.Contains(lines[i-1], "log prefix") {
			t.Errorf("drop without a log rule before it: %s", l)
		}
	}
}
