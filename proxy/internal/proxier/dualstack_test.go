package proxier

import (
	"context"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"trireme.dev/proxy/internal/healthcheck"
	"trireme.dev/proxy/internal/metrics"
	"trireme.dev/proxy/internal/model"

	"trireme.dev/componentbase/testwait"
)

func dualService() *v1.Service {
	s := svc("dual", v1.ProtocolTCP)
	s.Spec.Type = v1.ServiceTypeLoadBalancer
	s.Spec.ClusterIPs = []string{"10.96.0.20", "fd00:96::20"}
	s.Spec.ClusterIP = s.Spec.ClusterIPs[0]
	s.Spec.IPFamilies = []v1.IPFamily{v1.IPv4Protocol, v1.IPv6Protocol}
	s.Spec.ExternalIPs = []string{"203.0.113.5", "2001:db8::5"}
	s.Spec.Ports[0].NodePort = 30080
	s.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: "198.51.100.7"}, {IP: "2001:db8:1::7"}}
	return s
}

func dualSlices() []*discovery.EndpointSlice {
	v4 := epSlice("dual", "10.0.0.1", "10.0.0.2")
	v6 := epSlice("dual", "fd00:10::1")
	v6.Name, v6.AddressType = "dual-6", discovery.AddressTypeIPv6
	return []*discovery.EndpointSlice{v4, v6}
}

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

// TestDualStack checks the family split: one back end per family, each
// given only its family's addresses and endpoints and NodePorts on its
// family's node addresses; a failing family is retried fully and turns
// health bad while the other keeps syncing.
func TestDualStack(t *testing.T) {
	ctx, cancel := context.WithCancel(logr.NewContext(context.Background(), testr.New(t)))
	defer cancel()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node"}, Status: v1.NodeStatus{Addresses: []v1.NodeAddress{
		{Type: v1.NodeInternalIP, Address: "192.0.2.10"}, {Type: v1.NodeInternalIP, Address: "2001:db8:2::10"},
	}}}
	sl := dualSlices()
	client := fake.NewClientset(dualService(), sl[0], sl[1], svc("v4only", v1.ProtocolTCP), node)
	rec4, rec6 := &recorder{}, &recorder{}
	m := metrics.New()
	health := healthcheck.NewProxyHealth(300*time.Millisecond, "IPv4", "IPv6")
	p := NewDualStack(Config{NodeName: "node", MinSyncPeriod: 10 * time.Millisecond, SyncPeriod: time.Hour, NodePortPrimary: true},
		client, []Backend{{Family: model.IPv4, Backend: rec4}, {Family: model.IPv6, Backend: rec6}}, health, &healthcheck.Services{}, m)
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()

	dual := model.ServicePortName{Port: "p", Protocol: v1.ProtocolTCP}
	dual.Namespace, dual.Name = "ns", "dual"
	v4only := dual
	v4only.Name = "v4only"

	t.Run("each family gets its own addresses and endpoints", func(t *testing.T) {
		testwait.ForTrue(t, 10*time.Second, "a sync of both", func() bool {
			_, n4 := rec4.last()
			_, n6 := rec6.last()
			return n4 > 0 && n6 > 0
		})
		tests := []struct {
			rec                          *recorder
			wantPorts                    int
			cluster, ext, lb, eps, nodes []string
		}{
			{rec4, 2, []string{"10.96.0.20"}, []string{"203.0.113.5"}, []string{"198.51.100.7"}, []string{"10.0.0.1", "10.0.0.2"}, []string{"192.0.2.10"}},
			{rec6, 1, []string{"fd00:96::20"}, []string{"2001:db8::5"}, []string{"2001:db8:1::7"}, []string{"fd00:10::1"}, []string{"2001:db8:2::10"}},
		}
		for _, tt := range tests {
			req, _ := tt.rec.last()
			sp := req.State[dual]
			if len(req.State) != tt.wantPorts || sp == nil {
				t.Fatalf("state = %v, want %d ports with %v", req.State, tt.wantPorts, dual)
			}
			var eps []netip.Addr
			for _, e := range sp.Endpoints {
				eps = append(eps, e.IP)
			}
			if !slices.Equal([]netip.Addr{sp.ClusterIP}, addrs(tt.cluster...)) || !slices.Equal(sp.ExternalIPs, addrs(tt.ext...)) ||
				!slices.Equal(sp.LoadBalancerIPs, addrs(tt.lb...)) || !slices.Equal(eps, addrs(tt.eps...)) || sp.NodePort != 30080 {
				t.Errorf("port = %+v", sp)
			}
			if !slices.Equal(req.NodePortIPs, addrs(tt.nodes...)) {
				t.Errorf("node port IPs = %v, want %v", req.NodePortIPs, tt.nodes)
			}
		}
		if req, _ := rec6.last(); req.State[v4only] != nil {
			t.Error("the IPv6 back end got a single-stack IPv4 Service")
		}
		if got := testutil.ToFloat64(m.Skipped); got != 0 {
			t.Errorf("skipped = %v: the other family's slices are not skips in dual-stack", got)
		}
		if got := testutil.ToFloat64(m.Services); got != 3 {
			t.Errorf("service_ports = %v, want 3 summed over the families", got)
		}
		if got := testutil.ToFloat64(m.Endpoints); got != 3 {
			t.Errorf("endpoints = %v, want 3 summed over the families", got)
		}
		for _, f := range []string{"IPv4", "IPv6"} {
			if got := testutil.ToFloat64(m.FamilyLastSync.WithLabelValues(f)); got == 0 {
				t.Errorf("no last sync time for %s", f)
			}
		}
	})

	t.Run("an IPv6 slice change is a partial sync of the IPv6 back end", func(t *testing.T) {
		_, before := rec6.last()
		v6 := dualSlices()[1]
		v6.Endpoints = append(v6.Endpoints, discovery.Endpoint{Addresses: []string{"fd00:10::2"}})
		if _, err := client.DiscoveryV1().EndpointSlices("ns").Update(ctx, v6, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		testwait.ForTrue(t, 10*time.Second, "the IPv6 sync", func() bool {
			req, n := rec6.last()
			return n > before && len(req.State[dual].Endpoints) == 2
		})
		req, _ := rec6.last()
		if _, ok := req.Changed[dual]; req.Full || !ok {
			t.Errorf("IPv6 request full=%v changed=%v", req.Full, req.Changed)
		}
		req, _ = rec4.last()
		if len(req.Changed) != 0 || req.Full {
			t.Errorf("IPv4 request full=%v changed=%v, want nothing", req.Full, req.Changed)
		}
	})

	t.Run("a failing IPv6 back end turns health bad while IPv4 keeps syncing", func(t *testing.T) {
		rec6.setFail(true)
		if _, err := client.DiscoveryV1().EndpointSlices("ns").Update(ctx, epSlice("dual", "10.0.0.3"), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		testwait.ForTrue(t, 10*time.Second, "IPv4 synced", func() bool {
			req, _ := rec4.last()
			return len(req.State[dual].Endpoints) == 1 && req.State[dual].Endpoints[0].IP.String() == "10.0.0.3"
		})
		testwait.ForTrue(t, 10*time.Second, "failures", func() bool { return testutil.ToFloat64(m.SyncFailures) >= 2 })
		if req, _ := rec6.last(); !req.Full {
			t.Error("IPv6 retry after a failure was not full")
		}
		testwait.ForTrue(t, 10*time.Second, "unhealthy", func() bool { ok, _, _ := health.Healthy(); return !ok })
		if got := testutil.ToFloat64(m.FamilySyncFailures.WithLabelValues("IPv4")); got != 0 {
			t.Errorf("IPv4 failures = %v, want 0", got)
		}
		if got := testutil.ToFloat64(m.FamilySyncFailures.WithLabelValues("IPv6")); got < 2 {
			t.Errorf("IPv6 failures = %v, want >= 2", got)
		}
		rec6.setFail(false)
		testwait.ForTrue(t, 10*time.Second, "healthy again", func() bool { ok, _, _ := health.Healthy(); return ok })
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
