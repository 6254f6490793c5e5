package allocator

import (
	"math"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	lbv1alpha1 "trireme.dev/api/loadbalancer/v1alpha1"
)

func pool(t *testing.T, name string, spec lbv1alpha1.AddressPoolSpec) Pool {
	t.Helper()
	p, err := PoolFromSpec(name, &spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var (
	v4   = []corev1.IPFamily{corev1.IPv4Protocol}
	v6   = []corev1.IPFamily{corev1.IPv6Protocol}
	dual = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
	http = []Port{{Protocol: corev1.ProtocolTCP, Port: 80}}
	dns  = []Port{{Protocol: corev1.ProtocolUDP, Port: 53}}
	no   = false
)

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func TestAssign(t *testing.T) {
	type step struct {
		req     Request
		release string // a key released before req
		want    string // addresses, space-separated
		err     string // a substring of the error
	}
	for _, tc := range []struct {
		name  string
		pools []lbv1alpha1.AddressPoolSpec // named p0, p1, ...
		steps []step
	}{
		{
			name:  "first free address, then the next",
			pools: []lbv1alpha1.AddressPoolSpec{{Addresses: []string{"10.0.0.0/30"}}},
			steps: []step{
				{req: Request{Key: "a/x", Families: v4}, want: "10.0.0.0"},
				{req: Request{Key: "a/y", Families: v4}, want: "10.0.0.1"},
				{req: Request{Key: "a/x", Families: v4}, want: "10.0.0.0"},
			},
		},
		{
			name:  "exhaustion names the pool, release frees",
			pools: []lbv1alpha1.AddressPoolSpec{{Addresses: []string{"10.0.0.1-10.0.0.2"}}},
			steps: []step{
				{req: Request{Key: "a/x", Families: v4}, want: "10.0.0.1"},
				{req: Request{Key: "a/y", Families: v4}, want: "10.0.0.2"},
				{req: Request{Key: "a/z", Families: v4}, err: `no free IPv4 address in address pool "p0"`},
				{release: "a/x", req: Request{Key: "a/z", Families: v4}, want: "10.0.0.1"},
			},
		},
		{
			name:  "avoid buggy IPs",
			pools: []lbv1alpha1.AddressPoolSpec{{Addresses: []string{"10.0.0.255-10.0.1.1"}, AvoidBuggyIPs: true}},
			steps: []step{{req: Request{Key: "a/x", Families: v4}, want: "10.0.1.1"}},
		},
		{
			name:  "dual stack",
			pools: []lbv1alpha1.AddressPoolSpec{{Addresses: []string{"10.0.0.0/30", "fd00::/126"}}},
			steps: []step{
				{req: Request{Key: "a/x", Families: dual, RequireAll: true}, want: "10.0.0.0 fd00::"},
				{req: Request{Key: "a/y", Families: []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}}, want: "fd00::1 10.0.0.1"},
			},
		},
		{
			name:  "prefer dual stack takes what there is",
			pools: []lbv1alpha1.AddressPoolSpec{{Addresses: []string{"10.0.0.0/30"}}},
			steps: []step{
				{req: Request{Key: "a/x", Families: dual}, want: "10.0.0.0"},
				{req: Request{Key: "a/y", Families: dual, RequireAll: true}, err: "no address pool with IPv6 addresses"},
				{req: Request{Key: "a/y", Families: v6}, err: "no address pool with IPv6 addresses"},
			},
		},
		{
			name: "pools by namespace and labels",
			pools: []lbv1alpha1.AddressPoolSpec{
				{Addresses: []string{"10.0.0.0/32"}, Namespaces: []string{"web"}},
				{Addresses: []string{"10.0.1.0/32"}, ServiceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "edge"}}},
				{Addresses: []string{"10.0.2.0/32"}, NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "db"}}},
			},
			steps: []step{
				{req: Request{Key: "web/x", Namespace: "web", Families: v4}, want: "10.0.0.0"},
				{req: Request{Key: "a/x", Namespace: "a", Labels: map[string]string{"tier": "edge"}, Families: v4}, want: "10.0.1.0"},
				{req: Request{Key: "b/x", Namespace: "b", NamespaceLabels: map[string]string{"team": "db"}, Families: v4}, want: "10.0.2.0"},
				{req: Request{Key: "c/x", Namespace: "c", Families: v4}, err: "no address pool with IPv4 addresses serves"},
			},
		},
		{
			name: "autoAssign false only on request",
			pools: []lbv1alpha1.AddressPoolSpec{
				{Addresses: []string{"10.0.0.0/32"}, AutoAssign: &no},
				{Addresses: []string{"10.0.1.0/32"}},
			},
			steps: []step{
				{req: Request{Key: "a/x", Families: v4}, want: "10.0.1.0"},
				{req: Request{Key: "a/y", Families: v4, Pool: "p0"}, want: "10.0.0.0"},
				{req: Request{Key: "a/z", Families: v4, Pool: "nope"}, err: `address pool "nope" does not exist`},
			},
		},
		{
			name:  "requested address",
			pools: []lbv1alpha1.AddressPoolSpec{{Addresses: []string{"10.0.0.0/29"}}},
			steps: []step{
				{req: Request{Key: "a/x", Families: v4, Requested: addrs("10.0.0.5")}, want: "10.0.0.5"},
				{req: Request{Key: "a/y", Families: v4, Requested: addrs("10.0.0.5")}, err: "10.0.0.5 is already in use by Service a/x"},
				{req: Request{Key: "a/y", Families: v4, Requested: addrs("10.9.0.5")}, err: "10.9.0.5 is in no address pool"},
				// Changing the request moves the Service and frees the old address.
				{req: Request{Key: "a/x", Families: v4, Requested: addrs("10.0.0.6")}, want: "10.0.0.6"},
				{req: Request{Key: "a/y", Families: v4, Requested: addrs("10.0.0.5")}, want: "10.0.0.5"},
			},
		},
		{
			name:  "sharing with different ports",
			pools: []lbv1alpha1.AddressPoolSpec{{Addresses: []string{"10.0.0.0/29"}}},
			steps: []step{
				{req: Request{Key: "a/web", Families: v4, SharingKey: "k", Ports: http}, want: "10.0.0.0"},
				{req: Request{Key: "a/dns", Families: v4, SharingKey: "k", Ports: dns}, want: "10.0.0.0"},
				{req: Request{Key: "a/web2", Families: v4, SharingKey: "k", Ports: http}, want: "10.0.0.1"},
				{req: Request{Key: "a/other", Families: v4, Ports: dns}, want: "10.0.0.2"},
				{req: Request{Key: "a/x", Families: v4, SharingKey: "other", Requested: addrs("10.0.0.0")}, err: "already in use by Service a/dns, Service a/web"},
				{req: Request{Key: "a/y", Families: v4, SharingKey: "k", Ports: dns, Requested: addrs("10.0.0.0")}, err: "already in use"},
				// The address stays while one sharer holds it.
				{release: "a/web", req: Request{Key: "a/z", Families: v4}, want: "10.0.0.3"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New()
			var pools []Pool
			for i, spec := range tc.pools {
				pools = append(pools, pool(t, "p"+string(rune('0'+i)), spec))
			}
			a.SetPools(pools)
			for i, s := range tc.steps {
				if s.release != "" {
					a.Release(s.release)
				}
				got, err := a.Assign(s.req)
				if s.err != "" {
					if err == nil || !strings.Contains(err.Error(), s.err) {
						t.Fatalf("step %d: got %v, %v; want an error containing %q", i, got, err, s.err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				var gs []string
				for _, ip := range got {
					gs = append(gs, ip.String())
				}
				if strings.Join(gs, " ") != s.want {
					t.Fatalf("step %d: got %v, want %s", i, gs, s.want)
				}
			}
		})
	}
}

// TestRestore is a restart: the allocations come back from the Services'
// status before anything is assigned, and none is handed out twice.
func TestRestore(t *testing.T) {
	a := New()
	a.SetPools([]Pool{pool(t, "p", lbv1alpha1.AddressPoolSpec{Addresses: []string{"10.0.0.0/30"}})})
	if c := a.Restore(Request{Key: "a/x"}, addrs("10.0.0.0")); len(c) != 0 {
		t.Fatalf("conflicts %v", c)
	}
	if c := a.Restore(Request{Key: "a/y"}, addrs("10.0.0.2", "10.9.9.9")); len(c) != 0 {
		t.Fatalf("an address outside the pools is still recorded; conflicts %v", c)
	}
	if c := a.Restore(Request{Key: "a/z"}, addrs("10.0.0.0")); len(c) != 1 {
		t.Fatalf("two Services claiming one address: conflicts %v, want the second's", c)
	}
	got, err := a.Assign(Request{Key: "a/z", Families: v4})
	if err != nil || got[0].String() != "10.0.0.1" {
		t.Fatalf("got %v, %v; want 10.0.0.1", got, err)
	}
	got, err = a.Assign(Request{Key: "a/x", Families: v4})
	if err != nil || got[0].String() != "10.0.0.0" {
		t.Fatalf("a restored Service keeps its address: got %v, %v", got, err)
	}
	got, err = a.Assign(Request{Key: "a/w", Families: v4})
	if err != nil || got[0].String() != "10.0.0.3" {
		t.Fatalf("got %v, %v; want 10.0.0.3", got, err)
	}
}

func TestUsage(t *testing.T) {
	a := New()
	a.SetPools([]Pool{
		pool(t, "p", lbv1alpha1.AddressPoolSpec{Addresses: []string{"10.0.0.0/24", "fd00::/64"}, AvoidBuggyIPs: true}),
		pool(t, "big", lbv1alpha1.AddressPoolSpec{Addresses: []string{"fd01::/32"}}),
	})
	for _, k := range []string{"a/x", "a/y"} {
		if _, err := a.Assign(Request{Key: k, Families: dual, Pool: "p"}); err != nil {
			t.Fatal(err)
		}
	}
	want := Usage{AssignedIPv4: 2, AssignedIPv6: 2, AvailableIPv4: 252, AvailableIPv6: math.MaxInt64}
	if u := a.Usage("p"); u != want {
		t.Errorf("usage of p %+v, want %+v", u, want)
	}
	if u := a.Usage("big"); u.AvailableIPv6 != math.MaxInt64 {
		t.Errorf("usage of big %+v, want a saturated IPv6 size", u)
	}
}
