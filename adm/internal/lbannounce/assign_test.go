package lbannounce

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestEligible(t *testing.T) {
	live := func(name string) Node { return Node{Name: name, Ready: true, LeaseLive: true} }
	for _, tc := range []struct {
		name     string
		nodes    []Node
		services []Service
		want     []string
	}{
		{name: "every ready node with a live lease, sorted", nodes: []Node{live("c"), live("a"), live("b")},
			services: []Service{{Key: "ns/s"}}, want: []string{"a", "b", "c"}},
		{name: "not ready", nodes: []Node{live("a"), {Name: "b", LeaseLive: true}},
			services: []Service{{Key: "ns/s"}}, want: []string{"a"}},
		{name: "lease lapsed", nodes: []Node{live("a"), {Name: "b", Ready: true}},
			services: []Service{{Key: "ns/s"}}, want: []string{"a"}},
		{name: "excluded by label", nodes: []Node{live("a"), {Name: "b", Ready: true, LeaseLive: true, Excluded: true}},
			services: []Service{{Key: "ns/s"}}, want: []string{"a"}},
		{name: "local: nodes with a ready endpoint", nodes: []Node{live("a"), live("b"), live("c")},
			services: []Service{{Key: "ns/s", Local: true, LocalNodes: []string{"c", "b"}}}, want: []string{"b", "c"}},
		{name: "local: an endpoint on a dead node does not count", nodes: []Node{live("a"), {Name: "b", Ready: true}},
			services: []Service{{Key: "ns/s", Local: true, LocalNodes: []string{"b"}}}, want: nil},
		{name: "local without endpoints: no node", nodes: []Node{live("a")},
			services: []Service{{Key: "ns/s", Local: true}}, want: nil},
		{name: "shared address: every local Service's nodes", nodes: []Node{live("a"), live("b"), live("c")},
			services: []Service{{Key: "ns/s1"}, {Key: "ns/s2", Local: true, LocalNodes: []string{"a", "b"}}, {Key: "ns/s3", Local: true, LocalNodes: []string{"b", "c"}}},
			want:     []string{"b"}},
		{name: "no nodes", services: []Service{{Key: "ns/s"}}, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Eligible(tc.nodes, tc.services); !slices.Equal(got, tc.want) {
				t.Errorf("Eligible = %v, want %v", got, tc.want)
			}
		})
	}
}

func addrs(n int) []netip.Addr {
	out := make([]netip.Addr, 0, n)
	ip := netip.MustParseAddr("192.168.50.0")
	for range n {
		ip = ip.Next()
		out = append(out, ip)
	}
	return out
}

func TestOwner(t *testing.T) {
	nodes := []string{"node-1", "node-2", "node-3", "node-4"}
	ips := addrs(400)
	for _, tc := range []struct {
		name  string
		check func(t *testing.T)
	}{
		{name: "no nodes, no owner", check: func(t *testing.T) {
			if got := Owner(ips[0], nil); got != "" {
				t.Errorf("Owner = %q", got)
			}
		}},
		{name: "one of the nodes, whatever their order", check: func(t *testing.T) {
			for _, ip := range ips {
				got := Owner(ip, nodes)
				if !slices.Contains(nodes, got) {
					t.Fatalf("Owner(%s) = %q", ip, got)
				}
				if rev := Owner(ip, []string{"node-4", "node-3", "node-2", "node-1"}); rev != got {
					t.Fatalf("Owner(%s) = %q, reversed %q", ip, got, rev)
				}
			}
		}},
		{name: "spread evenly", check: func(t *testing.T) {
			count := map[string]int{}
			for _, ip := range ips {
				count[Owner(ip, nodes)]++
			}
			for _, n := range nodes {
				// 100 expected each; a fair hash stays well within 60-140.
				if count[n] < 60 || count[n] > 140 {
					t.Errorf("%s owns %d of %d addresses: %v", n, count[n], len(ips), count)
				}
			}
		}},
		{name: "a node leaving moves only its addresses", check: func(t *testing.T) {
			for _, ip := range ips {
				before := Owner(ip, nodes)
				after := Owner(ip, []string{"node-1", "node-2", "node-4"})
				if before != "node-3" && after != before {
					t.Fatalf("%s moved from %s to %s though node-3 left", ip, before, after)
				}
			}
		}},
		{name: "a node joining takes addresses only for itself", check: func(t *testing.T) {
			moved := 0
			for _, ip := range ips {
				before := Owner(ip, nodes)
				after := Owner(ip, append(slices.Clone(nodes), "node-5"))
				if after != before {
					moved++
					if after != "node-5" {
						t.Fatalf("%s moved from %s to %s", ip, before, after)
					}
				}
			}
			if moved == 0 {
				t.Error("node-5 took no address")
			}
		}},
		{name: "IPv6", check: func(t *testing.T) {
			if got := Owner(netip.MustParseAddr("fd00:50::10"), nodes); !slices.Contains(nodes, got) {
				t.Errorf("Owner = %q", got)
			}
		}},
	} {
		t.Run(tc.name, tc.check)
	}
}

func TestAssign(t *testing.T) {
	nodes := []Node{{Name: "a", Ready: true, LeaseLive: true}, {Name: "b", Ready: true, LeaseLive: true}}
	ip1, ip2 := netip.MustParseAddr("192.168.50.1"), netip.MustParseAddr("192.168.50.2")
	got := Assign(nodes, map[netip.Addr][]Service{
		ip1: {{Key: "ns/s1"}},
		ip2: {{Key: "ns/s2", Local: true}}, // no endpoint: announced nowhere
	})
	if got[ip1] != Owner(ip1, []string{"a", "b"}) {
		t.Errorf("owner of %s = %q", ip1, got[ip1])
	}
	if owner, ok := got[ip2]; ok {
		t.Errorf("%s owned by %q without an eligible node", ip2, owner)
	}
}

func TestNodes(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	node := func(name string, ready corev1.ConditionStatus, labels map[string]string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}}}
	}
	lease := func(node, holder string, renewed time.Duration) *coordinationv1.Lease {
		return &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: LeaseName("trireme-lb", node)},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To[int32](4),
				RenewTime: &metav1.MicroTime{Time: now.Add(renewed)}}}
	}
	for _, tc := range []struct {
		name     string
		nodes    []*corev1.Node
		leases   []*coordinationv1.Lease
		want     []Node
		wantNext time.Time
	}{
		{name: "renewed a second ago: live until 3s from now",
			nodes: []*corev1.Node{node("a", corev1.ConditionTrue, nil)}, leases: []*coordinationv1.Lease{lease("a", "a_1", -time.Second)},
			want: []Node{{Name: "a", Ready: true, LeaseLive: true}}, wantNext: now.Add(3 * time.Second)},
		{name: "lapsed", nodes: []*corev1.Node{node("a", corev1.ConditionTrue, nil)}, leases: []*coordinationv1.Lease{lease("a", "a_1", -5*time.Second)},
			want: []Node{{Name: "a", Ready: true}}},
		{name: "released", nodes: []*corev1.Node{node("a", corev1.ConditionTrue, nil)}, leases: []*coordinationv1.Lease{lease("a", "", 0)},
			want: []Node{{Name: "a", Ready: true}}},
		{name: "no lease", nodes: []*corev1.Node{node("a", corev1.ConditionTrue, nil)},
			want: []Node{{Name: "a", Ready: true}}},
		{name: "another node's lease", nodes: []*corev1.Node{node("a", corev1.ConditionTrue, nil)}, leases: []*coordinationv1.Lease{lease("b", "b_1", 0)},
			want: []Node{{Name: "a", Ready: true}}},
		{name: "not ready, excluded, earliest expiry",
			nodes:  []*corev1.Node{node("a", corev1.ConditionFalse, nil), node("b", corev1.ConditionTrue, map[string]string{ExcludeLabel: ""})},
			leases: []*coordinationv1.Lease{lease("a", "a_1", 0), lease("b", "b_1", -2*time.Second)},
			want:   []Node{{Name: "a", LeaseLive: true}, {Name: "b", Ready: true, LeaseLive: true, Excluded: true}}, wantNext: now.Add(2 * time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, next := Nodes(tc.nodes, tc.leases, "trireme-lb", now)
			if !slices.Equal(got, tc.want) || !next.Equal(tc.wantNext) {
				t.Errorf("Nodes = %+v, %v; want %+v, %v", got, next, tc.want, tc.wantNext)
			}
		})
	}
}

func TestAddresses(t *testing.T) {
	svc := func(name string, mutate func(*corev1.Service), ips ...string) *corev1.Service {
		s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster}}
		for _, ip := range ips {
			s.Status.LoadBalancer.Ingress = append(s.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip, IPMode: ptr.To(corev1.LoadBalancerIPModeVIP)})
		}
		if mutate != nil {
			mutate(s)
		}
		return s
	}
	local := func(s *corev1.Service) { s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal }
	slice := func(svc string, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: svc + "-x",
			Labels: map[string]string{discoveryv1.LabelServiceName: svc}}, Endpoints: eps}
	}
	ep := func(node string, ready *bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{NodeName: ptr.To(node), Conditions: discoveryv1.EndpointConditions{Ready: ready}}
	}
	for _, tc := range []struct {
		name     string
		services []*corev1.Service
		slices   []*discoveryv1.EndpointSlice
		want     string
	}{
		{name: "cluster, dual-stack", services: []*corev1.Service{svc("s", nil, "192.168.50.1", "fd00:50::1")},
			want: "map[192.168.50.1:[{ns/s false []}] fd00:50::1:[{ns/s false []}]]"},
		{name: "pending: nothing", services: []*corev1.Service{svc("s", nil)}, want: "map[]"},
		{name: "another class: not ours", services: []*corev1.Service{svc("s", func(s *corev1.Service) { s.Spec.LoadBalancerClass = ptr.To("example.com/lb") }, "192.168.50.1")},
			want: "map[]"},
		{name: "no longer a LoadBalancer", services: []*corev1.Service{svc("s", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeClusterIP }, "192.168.50.1")},
			want: "map[]"},
		{name: "ipMode Proxy: not announced", services: []*corev1.Service{svc("s", func(s *corev1.Service) {
			s.Status.LoadBalancer.Ingress[0].IPMode = ptr.To(corev1.LoadBalancerIPModeProxy)
		}, "192.168.50.1")}, want: "map[]"},
		{name: "local: the nodes of ready endpoints", services: []*corev1.Service{svc("s", local, "192.168.50.1")},
			slices: []*discoveryv1.EndpointSlice{slice("s", ep("a", nil), ep("b", ptr.To(false)), ep("c", ptr.To(true))), slice("other", ep("d", nil))},
			want:   "map[192.168.50.1:[{ns/s true [a c]}]]"},
		{name: "shared", services: []*corev1.Service{svc("s1", nil, "192.168.50.1"), svc("s2", nil, "192.168.50.1")},
			want: "map[192.168.50.1:[{ns/s1 false []} {ns/s2 false []}]]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fmt.Sprint(Addresses(tc.services, tc.slices)); got != tc.want {
				t.Errorf("Addresses = %s, want %s", got, tc.want)
			}
		})
	}
}

func netipMust(s string) netip.Addr { return netip.MustParseAddr(s) }
