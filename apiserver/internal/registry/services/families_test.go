package services

import (
	"context"
	"errors"
	"net/netip"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	"trireme.dev/apiserver/internal/alloc/ipaddress"
)

// memIPs is an in-memory IPAddress store with create-if-absent semantics;
// the real store is exercised by the e2e suite.
type memIPs struct {
	mu  sync.Mutex
	ips map[string]bool
}

func (m *memIPs) New() runtime.Object { return &networkingv1.IPAddress{} }
func (m *memIPs) Destroy()            {}

func (m *memIPs) Create(_ context.Context, obj runtime.Object, _ rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name := obj.(*networkingv1.IPAddress).Name
	if m.ips[name] {
		return nil, apierrors.NewAlreadyExists(networkingv1.Resource("ipaddresses"), name)
	}
	m.ips[name] = true
	return obj, nil
}

func (m *memIPs) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ips[name] {
		return &networkingv1.IPAddress{ObjectMeta: metav1.ObjectMeta{Name: name}}, nil
	}
	return nil, apierrors.NewNotFound(networkingv1.Resource("ipaddresses"), name)
}

func (m *memIPs) Delete(_ context.Context, name string, _ rest.ValidateObjectFunc, _ *metav1.DeleteOptions) (runtime.Object, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.ips[name] {
		return nil, false, apierrors.NewNotFound(networkingv1.Resource("ipaddresses"), name)
	}
	delete(m.ips, name)
	return nil, true, nil
}

func (m *memIPs) held() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for ip := range m.ips {
		out = append(out, ip)
	}
	sort.Strings(out)
	return out
}

// newAllocators serves the comma-separated CIDRs over one in-memory store.
func newAllocators(t *testing.T, cidrs string) (*Allocators, *memIPs) {
	t.Helper()
	store := &memIPs{ips: map[string]bool{}}
	a := &Allocators{}
	for _, c := range strings.Split(cidrs, ",") {
		ips, err := ipaddress.New(netip.MustParsePrefix(c), store)
		if err != nil {
			t.Fatal(err)
		}
		a.IPs = append(a.IPs, ips)
	}
	return a, store
}

// causes renders an Invalid error's causes as "field: message" lines.
func causes(err error) []string {
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Details == nil {
		if err == nil {
			return nil
		}
		return []string{err.Error()}
	}
	var out []string
	for _, c := range se.ErrStatus.Details.Causes {
		out = append(out, c.Field+": "+c.Message)
	}
	return out
}

func policy(p corev1.IPFamilyPolicy) *corev1.IPFamilyPolicy { return &p }

type svcOpt func(*corev1.Service)

func withPolicy(p corev1.IPFamilyPolicy) svcOpt {
	return func(s *corev1.Service) { s.Spec.IPFamilyPolicy = policy(p) }
}

func withFamilies(f ...corev1.IPFamily) svcOpt {
	return func(s *corev1.Service) { s.Spec.IPFamilies = f }
}

func withIPs(ips ...string) svcOpt {
	return func(s *corev1.Service) {
		s.Spec.ClusterIPs = ips
		if len(ips) > 0 {
			s.Spec.ClusterIP = ips[0]
		}
	}
}

func withSelector(s *corev1.Service) { s.Spec.Selector = map[string]string{"app": "web"} }

func newSvc(opts ...svcOpt) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: corev1.ServiceSpec{
			Type:  corev1.ServiceTypeClusterIP,
			Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}},
		},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

const (
	v4     = corev1.IPv4Protocol
	v6     = corev1.IPv6Protocol
	single = corev1.IPFamilyPolicySingleStack
	prefer = corev1.IPFamilyPolicyPreferDualStack
	reqd   = corev1.IPFamilyPolicyRequireDualStack
)

func TestInitFamiliesOnCreate(t *testing.T) {
	const (
		only4 = "10.96.0.0/16"
		only6 = "fd00:96::/112"
		dual  = "10.96.0.0/16,fd00:96::/112"
		dual6 = "fd00:96::/112,10.96.0.0/16"
	)
	tests := []struct {
		name         string
		cidrs        string
		svc          *corev1.Service
		wantPolicy   corev1.IPFamilyPolicy
		wantFamilies []corev1.IPFamily
		wantErrs     []string
	}{
		{"default on IPv4", only4, newSvc(), single, []corev1.IPFamily{v4}, nil},
		{"default on IPv6", only6, newSvc(), single, []corev1.IPFamily{v6}, nil},
		{"default on dual-stack is the primary family", dual6, newSvc(), single, []corev1.IPFamily{v6}, nil},
		{"PreferDualStack on single-stack", only4, newSvc(withPolicy(prefer)), prefer, []corev1.IPFamily{v4}, nil},
		{"PreferDualStack on dual-stack", dual, newSvc(withPolicy(prefer)), prefer, []corev1.IPFamily{v4, v6}, nil},
		{"PreferDualStack on IPv6-primary dual-stack", dual6, newSvc(withPolicy(prefer)), prefer, []corev1.IPFamily{v6, v4}, nil},
		{"RequireDualStack asking IPv6 first", dual, newSvc(withPolicy(reqd), withFamilies(v6)), reqd, []corev1.IPFamily{v6, v4}, nil},
		{"SingleStack asking the secondary family", dual, newSvc(withFamilies(v6)), single, []corev1.IPFamily{v6}, nil},
		{"RequireDualStack on single-stack", only4, newSvc(withPolicy(reqd)), reqd, nil,
			[]string{"spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": this cluster is not configured for dual-stack services"}},
		{"RequireDualStack with both families on single-stack", only4, newSvc(withPolicy(reqd), withFamilies(v4, v6)), reqd, nil,
			[]string{"spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": this cluster is not configured for dual-stack services", "spec.ipFamilies[1]: Invalid value: \"IPv6\": not configured on this cluster"}},
		{"family the cluster lacks", only4, newSvc(withFamilies(v6)), single, nil,
			[]string{"spec.ipFamilies[0]: Invalid value: \"IPv6\": not configured on this cluster"}},
		{"SingleStack with two families", dual, newSvc(withPolicy(single), withFamilies(v4, v6)), single, nil,
			[]string{"spec.ipFamilyPolicy: Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"}},
		{"family inferred from requested IP", dual, newSvc(withPolicy(prefer), withIPs("fd00:96::10")), prefer, []corev1.IPFamily{v6, v4}, nil},
		{"requested IP of a family the cluster lacks", only4, newSvc(withIPs("fd00:96::10")), single, nil,
			[]string{"spec.clusterIPs[0]: Invalid value: [\"fd00:96::10\"]: IPv6 is not configured on this cluster"}},
		{"requested IP not matching its family", dual, newSvc(withPolicy(prefer), withIPs("10.96.0.10"), withFamilies(v6)), prefer, nil,
			[]string{"spec.clusterIPs[0]: Invalid value: \"10.96.0.10\": expected an IPv6 value as indicated by `ipFamilies[0]`"}},
		{"two requested IPs of one family", dual, newSvc(withPolicy(prefer), withIPs("10.96.0.10", "10.96.0.11")), prefer, nil,
			[]string{"spec.clusterIPs: Invalid value: [\"10.96.0.10\",\"10.96.0.11\"]: may specify no more than one IP for each IP family"}},
		{"headless selectorless defaults to dual families even on single-stack", only4, newSvc(withIPs("None")), reqd, []corev1.IPFamily{v4, v6}, nil},
		{"headless with selector is single-stack", dual, newSvc(withIPs("None"), withSelector), single, []corev1.IPFamily{v4}, nil},
		{"headless with selector PreferDualStack", dual, newSvc(withIPs("None"), withSelector, withPolicy(prefer)), prefer, []corev1.IPFamily{v4, v6}, nil},
		{"headless with selector RequireDualStack on single-stack", only4, newSvc(withIPs("None"), withSelector, withPolicy(reqd)), reqd, nil,
			[]string{"spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": this cluster is not configured for dual-stack services"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := newAllocators(t, tt.cidrs)
			err := a.initFamilies(tt.svc, nil)
			if got := causes(err); !slices.Equal(got, tt.wantErrs) {
				t.Fatalf("errors = %q, want %q", got, tt.wantErrs)
			}
			if err != nil {
				if !apierrors.IsInvalid(err) {
					t.Errorf("error is not Invalid: %v", err)
				}
				return
			}
			if got := policyOf(tt.svc); got != tt.wantPolicy {
				t.Errorf("policy = %q, want %q", got, tt.wantPolicy)
			}
			if !reflect.DeepEqual(tt.svc.Spec.IPFamilies, tt.wantFamilies) {
				t.Errorf("families = %v, want %v", tt.svc.Spec.IPFamilies, tt.wantFamilies)
			}
		})
	}
}

func create(t *testing.T, a *Allocators, svc *corev1.Service) error {
	t.Helper()
	fin, err := a.beginCreate(context.Background(), svc, &metav1.CreateOptions{})
	if err == nil {
		fin(context.Background(), true)
	}
	return err
}

func update(t *testing.T, a *Allocators, svc, old *corev1.Service) error {
	t.Helper()
	fin, err := a.beginUpdate(context.Background(), svc, old, &metav1.UpdateOptions{})
	if err == nil {
		fin(context.Background(), true)
	}
	return err
}

func TestAllocateCreate(t *testing.T) {
	tests := []struct {
		name     string
		cidrs    string
		svc      *corev1.Service
		wantIPs  int
		wantErrs []string
	}{
		{"single-stack", "10.96.0.0/16,fd00:96::/112", newSvc(), 1, nil},
		{"PreferDualStack", "10.96.0.0/16,fd00:96::/112", newSvc(withPolicy(prefer)), 2, nil},
		{"PreferDualStack on single-stack", "10.96.0.0/16", newSvc(withPolicy(prefer)), 1, nil},
		{"RequireDualStack with requested IPs", "10.96.0.0/16,fd00:96::/112", newSvc(withPolicy(reqd), withIPs("10.96.0.10", "fd00:96::10")), 2, nil},
		{"requested IPv6 out of range", "10.96.0.0/16,fd00:96::/112", newSvc(withPolicy(reqd), withIPs("10.96.0.10", "fd00:97::10")), 0,
			[]string{"spec.clusterIPs: Invalid value: [\"10.96.0.10\",\"fd00:97::10\"]: failed to allocate IP fd00:97::10: the provided IP (fd00:97::10) is not in the valid range. The range of valid IPs is fd00:96::/112"}},
		{"headless gets no IP", "10.96.0.0/16,fd00:96::/112", newSvc(withIPs("None"), withPolicy(prefer)), 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, store := newAllocators(t, tt.cidrs)
			err := create(t, a, tt.svc)
			if got := causes(err); !slices.Equal(got, tt.wantErrs) {
				t.Fatalf("errors = %q, want %q", got, tt.wantErrs)
			}
			held := store.held()
			if len(held) != tt.wantIPs {
				t.Fatalf("store holds %v, want %d IPs", held, tt.wantIPs)
			}
			if err != nil {
				return
			}
			if tt.svc.Spec.ClusterIP != tt.svc.Spec.ClusterIPs[0] {
				t.Errorf("clusterIP %q is not clusterIPs[0] of %v", tt.svc.Spec.ClusterIP, tt.svc.Spec.ClusterIPs)
			}
			if tt.wantIPs > 0 && len(tt.svc.Spec.ClusterIPs) != tt.wantIPs {
				t.Errorf("clusterIPs = %v, want %d", tt.svc.Spec.ClusterIPs, tt.wantIPs)
			}
			for i, ip := range tt.svc.Spec.ClusterIPs {
				if ip != corev1.ClusterIPNone && familyOf(ip) != tt.svc.Spec.IPFamilies[i] {
					t.Errorf("clusterIPs[%d] %s is not of family %s", i, ip, tt.svc.Spec.IPFamilies[i])
				}
			}
			a.afterDelete(tt.svc, &metav1.DeleteOptions{})
			if held := store.held(); len(held) != 0 {
				t.Errorf("after delete the store still holds %v", held)
			}
		})
	}
}

func TestUpgradeDowngrade(t *testing.T) {
	a, store := newAllocators(t, "10.96.0.0/16,fd00:96::/112")
	old := newSvc()
	if err := create(t, a, old); err != nil {
		t.Fatal(err)
	}

	// Upgrade by policy alone, as `kubectl patch` sends it.
	up := old.DeepCopy()
	up.Spec.IPFamilyPolicy = policy(prefer)
	if err := update(t, a, up, old); err != nil {
		t.Fatal(err)
	}
	if len(up.Spec.ClusterIPs) != 2 || up.Spec.ClusterIPs[0] != old.Spec.ClusterIP || !slices.Equal(up.Spec.IPFamilies, []corev1.IPFamily{v4, v6}) {
		t.Fatalf("upgraded to %v %v", up.Spec.ClusterIPs, up.Spec.IPFamilies)
	}
	if got := store.held(); len(got) != 2 {
		t.Fatalf("store holds %v after upgrade", got)
	}
	if len(old.Spec.ClusterIPs) != 1 {
		t.Fatalf("update changed the old object: %v", old.Spec.ClusterIPs)
	}

	// An unchanged PreferDualStack update keeps everything.
	same := up.DeepCopy()
	if err := update(t, a, same, up); err != nil || !slices.Equal(same.Spec.ClusterIPs, up.Spec.ClusterIPs) {
		t.Fatalf("no-op update: %v, %v", err, same.Spec.ClusterIPs)
	}

	// Dropping the secondary without SingleStack is refused.
	bad := up.DeepCopy()
	bad.Spec.ClusterIPs = bad.Spec.ClusterIPs[:1]
	bad.Spec.IPFamilies = bad.Spec.IPFamilies[:1]
	want := []string{"spec.ipFamilyPolicy: Invalid value: \"PreferDualStack\": must be 'SingleStack' to release the secondary cluster IP", "spec.ipFamilyPolicy: Invalid value: \"PreferDualStack\": must be 'SingleStack' to release the secondary IP family"}
	if got := causes(update(t, a, bad, up)); !slices.Equal(got, want) {
		t.Fatalf("errors = %q, want %q", got, want)
	}

	// Downgrade by policy alone releases the secondary.
	down := up.DeepCopy()
	down.Spec.IPFamilyPolicy = policy(single)
	if err := update(t, a, down, up); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(down.Spec.ClusterIPs, old.Spec.ClusterIPs) || !slices.Equal(down.Spec.IPFamilies, []corev1.IPFamily{v4}) {
		t.Fatalf("downgraded to %v %v", down.Spec.ClusterIPs, down.Spec.IPFamilies)
	}
	if got := store.held(); !slices.Equal(got, old.Spec.ClusterIPs) {
		t.Fatalf("store holds %v after downgrade, want %v", got, old.Spec.ClusterIPs)
	}

	// The primary family can not be changed by an upgrade that names it.
	swap := down.DeepCopy()
	swap.Spec.IPFamilyPolicy = policy(reqd)
	swap.Spec.IPFamilies = []corev1.IPFamily{v6, v4}
	swap.Spec.ClusterIPs = nil
	swap.Spec.ClusterIP = ""
	if err := update(t, a, swap, down); err == nil {
		// The allocation layer lets a mismatch through only if validation
		// then refuses it; here the carried IPv4 address contradicts IPv6.
		t.Fatalf("primary family change accepted: %v %v", swap.Spec.ClusterIPs, swap.Spec.IPFamilies)
	}

	// Failed update gives back what it took.
	a2, store2 := newAllocators(t, "10.96.0.0/16,fd00:96::/112")
	s := newSvc()
	if err := create(t, a2, s); err != nil {
		t.Fatal(err)
	}
	up2 := s.DeepCopy()
	up2.Spec.IPFamilyPolicy = policy(reqd)
	fin, err := a2.beginUpdate(context.Background(), up2, s, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fin(context.Background(), false)
	if got := store2.held(); !slices.Equal(got, s.Spec.ClusterIPs) {
		t.Fatalf("store holds %v after a failed upgrade, want %v", got, s.Spec.ClusterIPs)
	}
}

func TestTypeChanges(t *testing.T) {
	a, store := newAllocators(t, "10.96.0.0/16,fd00:96::/112")
	svc := newSvc(withPolicy(prefer))
	if err := create(t, a, svc); err != nil {
		t.Fatal(err)
	}
	ext := svc.DeepCopy()
	ext.Spec.Type = corev1.ServiceTypeExternalName
	ext.Spec.ExternalName = "example.com"
	if err := update(t, a, ext, svc); err != nil {
		t.Fatal(err)
	}
	if ext.Spec.ClusterIP != "" || ext.Spec.ClusterIPs != nil || ext.Spec.IPFamilies != nil || ext.Spec.IPFamilyPolicy != nil {
		t.Fatalf("ExternalName kept %+v", ext.Spec)
	}
	if got := store.held(); len(got) != 0 {
		t.Fatalf("store holds %v after change to ExternalName", got)
	}
	back := ext.DeepCopy()
	back.Spec.Type = corev1.ServiceTypeClusterIP
	back.Spec.ExternalName = ""
	back.Spec.IPFamilyPolicy = policy(reqd)
	if err := update(t, a, back, ext); err != nil {
		t.Fatal(err)
	}
	if len(back.Spec.ClusterIPs) != 2 || len(store.held()) != 2 {
		t.Fatalf("back to ClusterIP: %v, store %v", back.Spec.ClusterIPs, store.held())
	}
}
