package model

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func service(mutate func(*v1.Service)) *v1.Service {
	s := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc"},
		Spec: v1.ServiceSpec{
			Type: v1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"},
			Ports: []v1.ServicePort{{Name: "http", Port: 80, Protocol: v1.ProtocolTCP}},
		},
	}
	if mutate != nil {
		mutate(s)
	}
	return s
}

type epSpec struct {
	ip                          string
	ready, serving, terminating *bool
	node                        string
}

func slice(name string, at discovery.AddressType, port int32, eps ...epSpec) *discovery.EndpointSlice {
	es := &discovery.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{discovery.LabelServiceName: "svc"}},
		AddressType: at,
		Ports:       []discovery.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(port), Protocol: ptr.To(v1.ProtocolTCP)}},
	}
	for _, e := range eps {
		ep := discovery.Endpoint{Addresses: []string{e.ip}, Conditions: discovery.EndpointConditions{Ready: e.ready, Serving: e.serving, Terminating: e.terminating}}
		if e.node != "" {
			ep.NodeName = ptr.To(e.node)
		}
		es.Endpoints = append(es.Endpoints, ep)
	}
	return es
}

func ips(eps []Endpoint) []string {
	var out []string
	for _, e := range eps {
		out = append(out, e.String())
	}
	return out
}

func TestBuild(t *testing.T) {
	yes, no := ptr.To(true), ptr.To(false)
	tests := []struct {
		name      string
		svc       *v1.Service
		slices    []*discovery.EndpointSlice
		wantPorts int
		check     func(t *testing.T, sp *ServicePort)
		wantSkip  string
	}{{
		name:      "ready endpoints, conditions defaulted",
		svc:       service(nil),
		slices:    []*discovery.EndpointSlice{slice("a", discovery.AddressTypeIPv4, 8080, epSpec{ip: "10.0.0.2"}, epSpec{ip: "10.0.0.1", ready: yes}, epSpec{ip: "10.0.0.3", ready: no})},
		wantPorts: 1,
		check: func(t *testing.T, sp *ServicePort) {
			if got := ips(sp.AllEndpoints()); !slices.Equal(got, []string{"10.0.0.1:8080", "10.0.0.2:8080"}) {
				t.Errorf("usable = %v", got)
			}
		},
	}, {
		name: "serving terminating endpoints when none is ready",
		svc:  service(nil),
		slices: []*discovery.EndpointSlice{slice("a", discovery.AddressTypeIPv4, 8080,
			epSpec{ip: "10.0.0.1", ready: no, serving: yes, terminating: yes},
			epSpec{ip: "10.0.0.2", ready: no, serving: no, terminating: yes})},
		wantPorts: 1,
		check: func(t *testing.T, sp *ServicePort) {
			if got := ips(sp.AllEndpoints()); !slices.Equal(got, []string{"10.0.0.1:8080"}) {
				t.Errorf("usable = %v", got)
			}
		},
	}, {
		name: "duplicate endpoint across slices kept once, ready copy wins",
		svc:  service(nil),
		slices: []*discovery.EndpointSlice{
			slice("a", discovery.AddressTypeIPv4, 8080, epSpec{ip: "10.0.0.1", ready: no}),
			slice("b", discovery.AddressTypeIPv4, 8080, epSpec{ip: "10.0.0.1", ready: yes}),
		},
		wantPorts: 1,
		check: func(t *testing.T, sp *ServicePort) {
			if len(sp.Endpoints) != 1 || !sp.Endpoints[0].Ready {
				t.Errorf("endpoints = %+v", sp.Endpoints)
			}
		},
	}, {
		name: "externalTrafficPolicy Local uses local endpoints, node ports and health check port",
		svc: service(func(s *v1.Service) {
			s.Spec.Type = v1.ServiceTypeLoadBalancer
			s.Spec.Ports[0].NodePort = 30080
			s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
			s.Spec.HealthCheckNodePort = 31000
			s.Spec.ExternalIPs = []string{"192.168.1.1", "fd00::1"}
			s.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: "203.0.113.1"}, {Hostname: "lb.example"}}
		}),
		slices:    []*discovery.EndpointSlice{slice("a", discovery.AddressTypeIPv4, 8080, epSpec{ip: "10.0.0.1", node: "me"}, epSpec{ip: "10.0.0.2", node: "other"})},
		wantPorts: 1,
		check: func(t *testing.T, sp *ServicePort) {
			if !sp.ExternalLocal || sp.HealthCheckNodePort != 31000 || sp.NodePort != 30080 {
				t.Errorf("port = %+v", sp)
			}
			if got := ips(sp.ExternalEndpoints()); !slices.Equal(got, []string{"10.0.0.1:8080"}) {
				t.Errorf("external = %v", got)
			}
			if got := ips(sp.InternalEndpoints()); len(got) != 2 {
				t.Errorf("internal = %v", got)
			}
			if len(sp.ExternalIPs) != 1 || len(sp.LoadBalancerIPs) != 1 {
				t.Errorf("external IPs %v, LB IPs %v: want the IPv4 ones only", sp.ExternalIPs, sp.LoadBalancerIPs)
			}
		},
	}, {
		name: "ClientIP affinity with default timeout",
		svc: service(func(s *v1.Service) {
			s.Spec.SessionAffinity = v1.ServiceAffinityClientIP
		}),
		wantPorts: 1,
		check: func(t *testing.T, sp *ServicePort) {
			if sp.AffinityTimeout != 10800 {
				t.Errorf("timeout = %d", sp.AffinityTimeout)
			}
		},
	}, {
		name: "unsupported protocol skipped, other ports kept",
		svc: service(func(s *v1.Service) {
			s.Spec.Ports = append(s.Spec.Ports, v1.ServicePort{Name: "weird", Port: 99, Protocol: "ICMP"})
		}),
		wantPorts: 1,
		wantSkip:  `unsupported protocol "ICMP"`,
	}, {
		name:      "FQDN slice skipped",
		svc:       service(nil),
		slices:    []*discovery.EndpointSlice{slice("a", discovery.AddressTypeFQDN, 8080, epSpec{ip: "example.com"})},
		wantPorts: 1,
		wantSkip:  `unsupported address type "FQDN"`,
	}, {
		name: "load-balancer IPs and source ranges of this family; a bad range skipped",
		svc: service(func(s *v1.Service) {
			s.Spec.Type = v1.ServiceTypeLoadBalancer
			s.Spec.LoadBalancerSourceRanges = []string{"192.0.2.0/24", " 198.51.100.9/32", "fd00::/64", "not-a-cidr"}
			s.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: "203.0.113.7"}, {Hostname: "lb.example"}, {IP: "fd00::7"}}
		}),
		wantPorts: 1,
		check: func(t *testing.T, sp *ServicePort) {
			if got := fmt.Sprint(sp.LoadBalancerIPs, sp.LoadBalancerSourceRanges); got != "[203.0.113.7] [192.0.2.0/24 198.51.100.9/32]" {
				t.Errorf("load balancer = %s", got)
			}
		},
		wantSkip: `loadBalancerSourceRanges: "not-a-cidr" is not a CIDR`,
	}, {
		name:      "slice of the other family skipped with a logged reason",
		svc:       service(nil),
		slices:    []*discovery.EndpointSlice{slice("a", discovery.AddressTypeIPv6, 8080, epSpec{ip: "fd00::1"})},
		wantPorts: 1,
		wantSkip:  `address type IPv6 is not the family this proxy serves (IPv4)`,
	}, {
		name: "headless Service has nothing to proxy",
		svc: service(func(s *v1.Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = v1.ClusterIPNone, []string{v1.ClusterIPNone}
		}),
		wantPorts: 0,
	}, {
		name:      "ExternalName Service has nothing to proxy",
		svc:       service(func(s *v1.Service) { s.Spec.Type = v1.ServiceTypeExternalName }),
		wantPorts: 0,
	}, {
		name:      "IPv6-only Service is not proxied by an IPv4 proxy",
		svc:       service(func(s *v1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "fd00::10", []string{"fd00::10"} }),
		wantPorts: 0,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ports, skips := Build(tt.svc, tt.slices, "me", IPv4)
			if len(ports) != tt.wantPorts {
				t.Fatalf("got %d ports, want %d", len(ports), tt.wantPorts)
			}
			if tt.check != nil {
				tt.check(t, ports[0])
			}
			var reasons []string
			for _, s := range skips {
				reasons = append(reasons, s.Reason)
			}
			if got := strings.Join(reasons, "; "); (tt.wantSkip == "") != (got == "") || !strings.Contains(got, tt.wantSkip) {
				t.Errorf("skips = %q, want %q", got, tt.wantSkip)
			}
		})
	}
}

type fakeSource map[types.NamespacedName]struct {
	svc    *v1.Service
	slices []*discovery.EndpointSlice
}

func (f fakeSource) Get(n types.NamespacedName) (*v1.Service, []*discovery.EndpointSlice) {
	e := f[n]
	return e.svc, e.slices
}

func TestTracker(t *testing.T) {
	name := types.NamespacedName{Namespace: "ns", Name: "svc"}
	udp := func(s *v1.Service) { s.Spec.Ports[0].Protocol = v1.ProtocolUDP }
	udpSlice := func(ips ...string) *discovery.EndpointSlice {
		var eps []epSpec
		for _, ip := range ips {
			eps = append(eps, epSpec{ip: ip})
		}
		es := slice("a", discovery.AddressTypeIPv4, 53, eps...)
		es.Ports[0].Protocol = ptr.To(v1.ProtocolUDP)
		return es
	}
	src := fakeSource{}
	steps := []trackerStep{
		{"service without endpoints appears", func() {
			src[name] = struct {
				svc    *v1.Service
				slices []*discovery.EndpointSlice
			}{service(udp), nil}
		}, 1, nil},
		{"endpoints arrive: flows refused before are cleared", func() {
			e := src[name]
			e.slices = []*discovery.EndpointSlice{udpSlice("10.0.0.1", "10.0.0.2")}
			src[name] = e
		}, 1, []string{"10.96.0.10:80->*"}},
		{"nothing changed", func() {}, 0, nil},
		{"one endpoint goes: its flows are cleared", func() {
			e := src[name]
			e.slices = []*discovery.EndpointSlice{udpSlice("10.0.0.1")}
			src[name] = e
		}, 1, []string{"10.96.0.10:80->10.0.0.2"}},
		{"service deleted", func() { delete(src, name) }, 1, []string{"10.96.0.10:80->10.0.0.1"}},
		{"service appears with endpoints: flows sent before are cleared", func() {
			src[name] = struct {
				svc    *v1.Service
				slices []*discovery.EndpointSlice
			}{service(udp), []*discovery.EndpointSlice{udpSlice("10.0.0.3")}}
		}, 1, []string{"10.96.0.10:80->*"}},
	}
	runTracker(t, src, name, steps)
}

// trackerStep changes the source, then Apply must report wantChanged ports
// and wantStale flows ("serviceIP:port->endpoint", * for any endpoint).
type trackerStep struct {
	name        string
	set         func()
	wantChanged int
	wantStale   []string
}

// runTracker runs steps in order over one Tracker reading src.
func runTracker(t *testing.T, src fakeSource, name types.NamespacedName, steps []trackerStep) {
	tr := NewTracker("me", IPv4)
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.set()
			tr.Mark(name)
			if !tr.Pending() {
				t.Fatal("Mark left nothing pending")
			}
			state, ch := tr.Apply(src, nil)
			if len(ch.Ports) != st.wantChanged {
				t.Errorf("changed = %v, want %d", ch.Ports, st.wantChanged)
			}
			var stale []string
			for _, f := range ch.Stale {
				ep := "*"
				if f.Endpoint.IsValid() {
					ep = f.Endpoint.String()
				}
				stale = append(stale, netip.AddrPortFrom(f.ServiceIP, uint16(f.Port)).String()+"->"+ep)
			}
			if !slices.Equal(stale, st.wantStale) {
				t.Errorf("stale = %v, want %v", stale, st.wantStale)
			}
			if _, ok := src[name]; ok != (len(state) == 1) {
				t.Errorf("state = %v", state)
			}
		})
	}
}

func TestTrackerTCP(t *testing.T) {
	name := types.NamespacedName{Namespace: "ns", Name: "svc"}
	terminating := epSpec{ip: "10.0.0.2", ready: ptr.To(false), serving: ptr.To(true), terminating: ptr.To(true)}
	src := fakeSource{}
	set := func(eps ...epSpec) func() {
		return func() {
			src[name] = struct {
				svc    *v1.Service
				slices []*discovery.EndpointSlice
			}{service(nil), []*discovery.EndpointSlice{slice("a", discovery.AddressTypeIPv4, 8080, eps...)}}
		}
	}
	runTracker(t, src, name, []trackerStep{
		{"service with two endpoints appears", set(epSpec{ip: "10.0.0.1"}, epSpec{ip: "10.0.0.2"}), 1, nil},
		// Its connections drain: nothing is cleared.
		{"one endpoint terminates", set(epSpec{ip: "10.0.0.1"}, terminating), 1, nil},
		{"its pod is gone: its entries are cleared", set(epSpec{ip: "10.0.0.1"}), 1, []string{"10.96.0.10:80->10.0.0.2"}},
		{"service deleted", func() { delete(src, name) }, 1, []string{"10.96.0.10:80->10.0.0.1"}},
	})
}
