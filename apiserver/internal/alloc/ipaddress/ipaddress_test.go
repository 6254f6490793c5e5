package ipaddress

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// memStore is an in-memory IPAddress store with etcd's create-if-absent
// semantics, enough for the allocator's contract. The real store is
// exercised by the apiserver integration suite.
type memStore struct {
	mu  sync.Mutex
	ips map[string]*networkingv1.IPAddress
	// failOn makes Create fail with a server error for this name.
	failOn string
}

func newMemStore() *memStore { return &memStore{ips: map[string]*networkingv1.IPAddress{}} }

var gr = networkingv1.Resource("ipaddresses")

func (m *memStore) New() runtime.Object { return &networkingv1.IPAddress{} }

func (m *memStore) Destroy() {}

func (m *memStore) Create(ctx context.Context, obj runtime.Object, _ rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	if ns, _ := genericapirequest.NamespaceFrom(ctx); ns != "" {
		return nil, apierrors.NewBadRequest("IPAddresses are cluster-scoped, got namespace " + ns)
	}
	ip := obj.(*networkingv1.IPAddress)
	m.mu.Lock()
	defer m.mu.Unlock()
	if ip.Name == m.failOn {
		return nil, apierrors.NewInternalError(errors.New("storage down"))
	}
	if _, ok := m.ips[ip.Name]; ok {
		return nil, apierrors.NewAlreadyExists(gr, ip.Name)
	}
	m.ips[ip.Name] = ip.DeepCopy()
	return ip, nil
}

func (m *memStore) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ip, ok := m.ips[name]; ok {
		return ip.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(gr, name)
}

func (m *memStore) Delete(_ context.Context, name string, _ rest.ValidateObjectFunc, _ *metav1.DeleteOptions) (runtime.Object, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ip, ok := m.ips[name]
	if !ok {
		return nil, false, apierrors.NewNotFound(gr, name)
	}
	delete(m.ips, name)
	return ip, true, nil
}

func (m *memStore) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.ips)
}

var owner = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}

func newAllocator(t *testing.T, cidr string) (*Allocator, *memStore) {
	t.Helper()
	s := newMemStore()
	a, err := New(netip.MustParsePrefix(cidr), s)
	if err != nil {
		t.Fatal(err)
	}
	return a, s
}

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		cidr    string
		wantErr bool
		first   string
	}{
		{"10.96.0.0/12", false, "10.96.0.1"},
		{"10.96.5.7/12", false, "10.96.0.1"}, // host bits are masked off
		{"192.168.0.0/30", false, "192.168.0.1"},
		{"192.168.0.0/31", true, ""},
		{"fd00:10:96::/108", false, "fd00:10:96::1"},
		{"fd00::/64", false, "fd00::1"},
	} {
		t.Run(tc.cidr, func(t *testing.T) {
			a, err := New(netip.MustParsePrefix(tc.cidr), newMemStore())
			if tc.wantErr {
				if err == nil {
					t.Fatalf("New(%s) accepted a range too small to serve", tc.cidr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := a.First().String(); got != tc.first {
				t.Errorf("First() = %s, want %s", got, tc.first)
			}
		})
	}
}

func TestAllocateRequested(t *testing.T) {
	ctx := context.Background()

	t.Run("requested IP is taken with an IPAddress naming its service", func(t *testing.T) {
		a, s := newAllocator(t, "10.96.0.0/12")
		ip := netip.MustParseAddr("10.96.10.10")
		got, err := a.Allocate(ctx, owner, ip, false)
		if err != nil || got != ip {
			t.Fatalf("Allocate = %v, %v; want %s", got, err, ip)
		}
		obj := s.ips[ip.String()]
		if obj == nil {
			t.Fatalf("no IPAddress %s stored", ip)
		}
		ref := obj.Spec.ParentRef
		if ref == nil || ref.Resource != "services" || ref.Namespace != "ns" || ref.Name != "web" ||
			obj.Labels[LabelManagedBy] != ManagedBy || obj.Labels[LabelIPFamily] != "IPv4" {
			t.Errorf("IPAddress = %+v, want parentRef services/ns/web and the allocator's labels", obj)
		}
	})

	t.Run("a taken IP is refused", func(t *testing.T) {
		a, _ := newAllocator(t, "10.96.0.0/12")
		ip := netip.MustParseAddr("10.96.10.11")
		if _, err := a.Allocate(ctx, owner, ip, false); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Allocate(ctx, owner, ip, false); !errors.Is(err, ErrAllocated) {
			t.Errorf("second Allocate(%s) = %v, want ErrAllocated", ip, err)
		}
	})

	t.Run("addresses outside the usable range are refused", func(t *testing.T) {
		a, s := newAllocator(t, "10.96.0.0/12")
		for _, ip := range []string{"10.96.0.0", "10.111.255.255", "10.112.0.1", "10.95.255.254", "fd00::1"} {
			if _, err := a.Allocate(ctx, owner, netip.MustParseAddr(ip), false); !errors.Is(err, ErrNotInRange) {
				t.Errorf("Allocate(%s) = %v, want ErrNotInRange", ip, err)
			}
		}
		if s.count() != 0 {
			t.Errorf("refused requests stored %d IPAddresses", s.count())
		}
	})

	t.Run("the last usable address is served", func(t *testing.T) {
		a, _ := newAllocator(t, "10.96.0.0/12")
		if _, err := a.Allocate(ctx, owner, netip.MustParseAddr("10.111.255.254"), false); err != nil {
			t.Errorf("Allocate(10.111.255.254) = %v", err)
		}
	})

	t.Run("dry run checks but stores nothing", func(t *testing.T) {
		a, s := newAllocator(t, "10.96.0.0/12")
		ip := netip.MustParseAddr("10.96.10.12")
		if _, err := a.Allocate(ctx, owner, ip, true); err != nil {
			t.Fatal(err)
		}
		if s.count() != 0 {
			t.Fatalf("dry run stored %d IPAddresses", s.count())
		}
		if _, err := a.Allocate(ctx, owner, ip, false); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Allocate(ctx, owner, ip, true); !errors.Is(err, ErrAllocated) {
			t.Errorf("dry run of a taken IP = %v, want ErrAllocated", err)
		}
	})

	t.Run("storage errors are returned, not mistaken for taken", func(t *testing.T) {
		a, s := newAllocator(t, "10.96.0.0/12")
		s.failOn = "10.96.10.13"
		_, err := a.Allocate(ctx, owner, netip.MustParseAddr("10.96.10.13"), false)
		if err == nil || errors.Is(err, ErrAllocated) {
			t.Errorf("Allocate with failing storage = %v, want the storage error", err)
		}
	})
}

func TestAllocateAny(t *testing.T) {
	ctx := context.Background()

	t.Run("fills a small range exactly, then is full", func(t *testing.T) {
		// A /28 has 14 usable addresses: .1 to .14.
		a, s := newAllocator(t, "10.0.0.0/28")
		seen := map[netip.Addr]bool{}
		for i := 0; i < 14; i++ {
			ip, err := a.Allocate(ctx, owner, netip.Addr{}, false)
			if err != nil {
				t.Fatalf("allocation %d: %v", i, err)
			}
			if seen[ip] || ip == netip.MustParseAddr("10.0.0.0") || ip == netip.MustParseAddr("10.0.0.15") || !a.CIDR().Contains(ip) {
				t.Fatalf("allocation %d gave %s (seen before: %v)", i, ip, seen[ip])
			}
			seen[ip] = true
		}
		if _, err := a.Allocate(ctx, owner, netip.Addr{}, false); !errors.Is(err, ErrFull) {
			t.Errorf("allocation in a full range = %v, want ErrFull", err)
		}
		if s.count() != 14 {
			t.Errorf("%d IPAddresses stored, want 14", s.count())
		}
	})

	t.Run("prefers the upper band, leaving the lower to requests", func(t *testing.T) {
		// 10.96.0.0/12 keeps offsets 1..256 for IPs asked for by number.
		a, _ := newAllocator(t, "10.96.0.0/12")
		low := netip.MustParseAddr("10.96.1.0")
		for i := 0; i < 50; i++ {
			ip, err := a.Allocate(ctx, owner, netip.Addr{}, false)
			if err != nil {
				t.Fatal(err)
			}
			if ip.Compare(low) <= 0 {
				t.Errorf("dynamic allocation %d took %s from the lower band", i, ip)
			}
		}
	})

	t.Run("falls back to the lower band when the upper is full", func(t *testing.T) {
		// A /27 has 30 usable addresses, a lower band of 16.
		a, _ := newAllocator(t, "10.0.0.0/27")
		for i := 0; i < 30; i++ {
			if _, err := a.Allocate(ctx, owner, netip.Addr{}, false); err != nil {
				t.Fatalf("allocation %d of 30: %v", i, err)
			}
		}
		if _, err := a.Allocate(ctx, owner, netip.Addr{}, false); !errors.Is(err, ErrFull) {
			t.Errorf("31st allocation = %v, want ErrFull", err)
		}
	})

	t.Run("dry run stores nothing", func(t *testing.T) {
		a, s := newAllocator(t, "10.0.0.0/28")
		ip, err := a.Allocate(ctx, owner, netip.Addr{}, true)
		if err != nil || !a.CIDR().Contains(ip) {
			t.Fatalf("dry run = %v, %v", ip, err)
		}
		if s.count() != 0 {
			t.Errorf("dry run stored %d IPAddresses", s.count())
		}
	})

	t.Run("concurrent allocations are distinct", func(t *testing.T) {
		a, _ := newAllocator(t, "10.0.0.0/26")
		const n = 62
		got := make([]netip.Addr, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { got[i], errs[i] = a.Allocate(ctx, owner, netip.Addr{}, false) })
		}
		wg.Wait()
		seen := map[netip.Addr]bool{}
		for i, ip := range got {
			if errs[i] != nil {
				t.Errorf("allocation %d: %v", i, errs[i])
				continue
			}
			if seen[ip] {
				t.Errorf("%s handed out twice", ip)
			}
			seen[ip] = true
		}
	})

	t.Run("IPv6 ranges", func(t *testing.T) {
		a, s := newAllocator(t, "fd00:10:96::/112")
		ip, err := a.Allocate(ctx, owner, netip.Addr{}, false)
		if err != nil || !ip.Is6() || !a.CIDR().Contains(ip) {
			t.Fatalf("Allocate = %v, %v; want an address of fd00:10:96::/112", ip, err)
		}
		if fam := s.ips[ip.String()].Labels[LabelIPFamily]; fam != "IPv6" {
			t.Errorf("family label = %q, want IPv6", fam)
		}
		// IPv6 has no broadcast address: the last one is usable.
		if _, err := a.Allocate(ctx, owner, netip.MustParseAddr("fd00:10:96::ffff"), false); err != nil {
			t.Errorf("Allocate(fd00:10:96::ffff) = %v", err)
		}
	})
}

func TestRelease(t *testing.T) {
	ctx := context.Background()
	a, s := newAllocator(t, "10.96.0.0/12")
	ip := netip.MustParseAddr("10.96.10.20")
	if _, err := a.Allocate(ctx, owner, ip, false); err != nil {
		t.Fatal(err)
	}

	t.Run("released IP can be taken again", func(t *testing.T) {
		if err := a.Release(ctx, ip); err != nil {
			t.Fatal(err)
		}
		if s.count() != 0 {
			t.Fatalf("IPAddress still stored after release")
		}
		if _, err := a.Allocate(ctx, owner, ip, false); err != nil {
			t.Errorf("allocate released IP: %v", err)
		}
	})

	t.Run("releasing a free IP is not an error", func(t *testing.T) {
		if err := a.Release(ctx, netip.MustParseAddr("10.96.10.21")); err != nil {
			t.Errorf("Release of a free IP = %v", err)
		}
	})
}
