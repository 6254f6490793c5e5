// Package allocator hands out LoadBalancer addresses from pools: one per
// IP family a Service asks for, the address it requests if it names one,
// shared between Services that opt in with the same key and use
// different ports. It is the provider's memory of who holds what; after a
// restart it is rebuilt with Restore from the Services' status before the
// first Assign, so that no address is handed out twice.
package allocator

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	lbv1alpha1 "trireme.dev/api/loadbalancer/v1alpha1"
)

// Pool is a named address pool in the form the allocator uses.
type Pool struct {
	// Name names the pool in errors and Events.
	Name string
	// Ranges are its addresses.
	Ranges []lbv1alpha1.AddressRange
	// AutoAssign serves Services that did not ask for the pool.
	AutoAssign bool
	// AvoidBuggyIPs skips IPv4 addresses ending in .0 or .255.
	AvoidBuggyIPs bool
	// Namespaces limits the pool to these namespaces; nil means any.
	Namespaces []string
	// NamespaceSelector and ServiceSelector limit the pool by labels; nil
	// means any.
	NamespaceSelector labels.Selector
	// ServiceSelector matches the labels of the Services the pool serves.
	ServiceSelector labels.Selector
}

// PoolFromSpec converts an AddressPool's spec, which must be valid.
func PoolFromSpec(name string, spec *lbv1alpha1.AddressPoolSpec) (Pool, error) {
	p := Pool{
		Name:          name,
		Ranges:        lbv1alpha1.ParseAddresses(spec),
		AutoAssign:    spec.AutoAssigns(),
		AvoidBuggyIPs: spec.AvoidBuggyIPs,
		Namespaces:    spec.Namespaces,
	}
	var err error
	if spec.NamespaceSelector != nil {
		if p.NamespaceSelector, err = metav1.LabelSelectorAsSelector(spec.NamespaceSelector); err != nil {
			return Pool{}, fmt.Errorf("pool %s: namespaceSelector: %w", name, err)
		}
	}
	if spec.ServiceSelector != nil {
		if p.ServiceSelector, err = metav1.LabelSelectorAsSelector(spec.ServiceSelector); err != nil {
			return Pool{}, fmt.Errorf("pool %s: serviceSelector: %w", name, err)
		}
	}
	return p, nil
}

// contains reports whether a is one of the pool's usable addresses.
func (p *Pool) contains(a netip.Addr) bool {
	if p.AvoidBuggyIPs && buggy(a) {
		return false
	}
	for _, r := range p.Ranges {
		if r.Contains(a) {
			return true
		}
	}
	return false
}

// serves reports whether the pool may give r an address.
func (p *Pool) serves(r *Request) bool {
	if p.Namespaces != nil && !slices.Contains(p.Namespaces, r.Namespace) {
		return false
	}
	if p.NamespaceSelector != nil && !p.NamespaceSelector.Matches(labels.Set(r.NamespaceLabels)) {
		return false
	}
	if p.ServiceSelector != nil && !p.ServiceSelector.Matches(labels.Set(r.Labels)) {
		return false
	}
	return true
}

// buggy reports an IPv4 address ending in .0 or .255.
func buggy(a netip.Addr) bool {
	if !a.Is4() {
		return false
	}
	last := a.As4()[3]
	return last == 0 || last == 255
}

// Port is one port a Service serves on its address.
type Port struct {
	Protocol corev1.Protocol
	Port     int32
}

// Request is what a Service asks of the allocator.
type Request struct {
	// Key identifies the Service: namespace/name.
	Key string
	// Namespace, Labels and NamespaceLabels select the pools that serve it.
	Namespace string
	// Labels are the Service's labels.
	Labels map[string]string
	// NamespaceLabels are its namespace's labels.
	NamespaceLabels map[string]string
	// Families are the IP families wanted, primary first.
	Families []corev1.IPFamily
	// RequireAll fails the request unless every family gets an address
	// (RequireDualStack); otherwise only the primary is required.
	RequireAll bool
	// Pool, when set, is the only pool tried.
	Pool string
	// Requested are addresses the Service asks for (spec.loadBalancerIP).
	Requested []netip.Addr
	// SharingKey lets Services with the same key share an address.
	SharingKey string
	// Ports are the Service's ports; sharing Services must not collide.
	Ports []Port
}

// holder is who holds one address.
type holder struct {
	sharingKey string
	users      map[string][]Port // Service key → its ports
}

// Allocator is safe for concurrent use.
type Allocator struct {
	mu    sync.Mutex
	pools []Pool
	byIP  map[netip.Addr]*holder
	bySvc map[string][]netip.Addr
}

// New returns an allocator with no pools and no allocations.
func New() *Allocator {
	return &Allocator{byIP: map[netip.Addr]*holder{}, bySvc: map[string][]netip.Addr{}}
}

// SetPools replaces the pools. Allocations are kept: an address outside
// every pool stays with its Service until the Service is next assigned.
func (a *Allocator) SetPools(pools []Pool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pools = slices.Clone(pools)
}

// Pools returns the names of the pools.
func (a *Allocator) Pools() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, p := range a.pools {
		out = append(out, p.Name)
	}
	return out
}

// Addresses returns the addresses key holds.
func (a *Allocator) Addresses(key string) []netip.Addr {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.bySvc[key])
}

// Restore records that r's Service holds addrs, as its status says: for
// rebuilding after a restart. Addresses another Service already holds
// without a compatible sharing key are not recorded and are returned, so
// that the caller can tell who lost them.
func (a *Allocator) Restore(r Request, addrs []netip.Addr) (conflicts []netip.Addr) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, ip := range addrs {
		if _, mine := a.holds(r.Key, ip); mine {
			continue
		}
		if !a.usable(&r, ip) {
			conflicts = append(conflicts, ip)
			continue
		}
		a.take(&r, ip)
	}
	return conflicts
}

// Release frees every address key holds.
func (a *Allocator) Release(key string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.release(key)
}

func (a *Allocator) release(key string) {
	for _, ip := range a.bySvc[key] {
		a.drop(key, ip)
	}
	delete(a.bySvc, key)
}

func (a *Allocator) drop(key string, ip netip.Addr) {
	h := a.byIP[ip]
	if h == nil {
		return
	}
	delete(h.users, key)
	if len(h.users) == 0 {
		delete(a.byIP, ip)
	}
}

// holds returns the holder of ip and whether key is among its users.
func (a *Allocator) holds(key string, ip netip.Addr) (*holder, bool) {
	h := a.byIP[ip]
	if h == nil {
		return nil, false
	}
	_, ok := h.users[key]
	return h, ok
}

// usable reports whether r may hold ip as far as other holders go: it is
// free, held by r alone, or shared under r's key with no port in common.
func (a *Allocator) usable(r *Request, ip netip.Addr) bool {
	h := a.byIP[ip]
	if h == nil {
		return true
	}
	others := 0
	for user, ports := range h.users {
		if user == r.Key {
			continue
		}
		others++
		for _, p := range ports {
			if slices.Contains(r.Ports, p) {
				return false
			}
		}
	}
	return others == 0 || (r.SharingKey != "" && h.sharingKey == r.SharingKey)
}

func (a *Allocator) take(r *Request, ip netip.Addr) {
	h := a.byIP[ip]
	if h == nil {
		h = &holder{users: map[string][]Port{}}
		a.byIP[ip] = h
	}
	if _, mine := h.users[r.Key]; len(h.users) == 0 || (mine && len(h.users) == 1) {
		// The only holder decides the address's sharing key.
		h.sharingKey = r.SharingKey
	}
	h.users[r.Key] = slices.Clone(r.Ports)
	if !slices.Contains(a.bySvc[r.Key], ip) {
		a.bySvc[r.Key] = append(a.bySvc[r.Key], ip)
	}
}

// Assign gives r's Service an address of each family it wants, keeping
// those it holds that still fit, and returns them primary family first.
// An error names the pool or address that could not serve it; the
// Service then keeps what it held.
func (a *Allocator) Assign(r Request) ([]netip.Addr, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(r.Families) == 0 {
		return nil, fmt.Errorf("no IP family")
	}
	var pools []*Pool
	if r.Pool != "" {
		i := slices.IndexFunc(a.pools, func(p Pool) bool { return p.Name == r.Pool })
		if i < 0 {
			return nil, fmt.Errorf("address pool %q does not exist", r.Pool)
		}
		if !a.pools[i].serves(&r) {
			return nil, fmt.Errorf("address pool %q does not serve namespace %s or this Service's labels", r.Pool, r.Namespace)
		}
		pools = []*Pool{&a.pools[i]}
	} else {
		for i := range a.pools {
			if a.pools[i].serves(&r) {
				pools = append(pools, &a.pools[i])
			}
		}
	}
	held := a.bySvc[r.Key]
	out := make([]netip.Addr, 0, len(r.Families))
	for i, fam := range r.Families {
		ip, err := a.assignFamily(&r, fam, pools, held)
		if err != nil {
			if i == 0 || r.RequireAll {
				return nil, err
			}
			continue
		}
		out = append(out, ip)
	}
	// Only now that the request is met are old addresses let go.
	for _, ip := range held {
		if !slices.Contains(out, ip) {
			a.drop(r.Key, ip)
		}
	}
	a.bySvc[r.Key] = nil
	for _, ip := range out {
		a.take(&r, ip)
	}
	return out, nil
}

// assignFamily picks r's address of one family.
func (a *Allocator) assignFamily(r *Request, fam corev1.IPFamily, pools []*Pool, held []netip.Addr) (netip.Addr, error) {
	is4 := fam == corev1.IPv4Protocol
	ofFamily := func(ip netip.Addr) bool { return ip.Is4() == is4 }
	inPools := func(ip netip.Addr) *Pool {
		for _, p := range pools {
			if p.contains(ip) {
				return p
			}
		}
		return nil
	}
	if i := slices.IndexFunc(r.Requested, ofFamily); i >= 0 {
		ip := r.Requested[i]
		switch {
		case inPools(ip) == nil && r.Pool != "":
			return netip.Addr{}, fmt.Errorf("requested address %s is not in address pool %q", ip, r.Pool)
		case inPools(ip) == nil:
			return netip.Addr{}, fmt.Errorf("requested address %s is in no address pool that serves this Service", ip)
		case !a.usable(r, ip):
			return netip.Addr{}, fmt.Errorf("requested address %s is already in use by %s", ip, a.usersOf(ip))
		}
		return ip, nil
	}
	// Keep what the Service holds while it still fits.
	for _, ip := range held {
		if ofFamily(ip) && inPools(ip) != nil && a.usable(r, ip) {
			return ip, nil
		}
	}
	var tried []string
	for _, p := range pools {
		if (r.Pool == "" && !p.AutoAssign) || !slices.ContainsFunc(p.Ranges, func(rg lbv1alpha1.AddressRange) bool { return rg.First.Is4() == is4 }) {
			continue
		}
		if ip, ok := a.freeIn(r, p, is4); ok {
			return ip, nil
		}
		tried = append(tried, p.Name)
	}
	if len(tried) == 0 {
		return netip.Addr{}, fmt.Errorf("no address pool with %s addresses serves this Service", fam)
	}
	return netip.Addr{}, fmt.Errorf("no free %s address in address pool %s", fam, quoteAll(tried))
}

// freeIn finds an address of p for r: first one shared under r's sharing
// key, so that sharing Services end up together, then a free one.
func (a *Allocator) freeIn(r *Request, p *Pool, is4 bool) (netip.Addr, bool) {
	if r.SharingKey != "" {
		var shared []netip.Addr
		for ip, h := range a.byIP {
			if h.sharingKey == r.SharingKey && ip.Is4() == is4 && p.contains(ip) && a.usable(r, ip) {
				shared = append(shared, ip)
			}
		}
		if len(shared) > 0 {
			return slices.MinFunc(shared, netip.Addr.Compare), true
		}
	}
	for _, rg := range p.Ranges {
		if rg.First.Is4() != is4 {
			continue
		}
		// Each step skips a held (or skipped) address, so the walk is as
		// long as the pool's used part, not its size.
		for ip := rg.First; ip.IsValid() && ip.Compare(rg.Last) <= 0; ip = ip.Next() {
			if p.AvoidBuggyIPs && buggy(ip) {
				continue
			}
			if _, taken := a.byIP[ip]; !taken {
				return ip, true
			}
		}
	}
	return netip.Addr{}, false
}

func (a *Allocator) usersOf(ip netip.Addr) string {
	h := a.byIP[ip]
	var keys []string
	for k := range h.users {
		keys = append(keys, "Service "+k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ", ")
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// Usage is a pool's count of held and free addresses per family.
type Usage struct {
	AssignedIPv4, AssignedIPv6   int64
	AvailableIPv4, AvailableIPv6 int64
}

// Usage counts the addresses of the named pool; sizes above 2^63-1 (IPv6)
// saturate.
func (a *Allocator) Usage(pool string) Usage {
	a.mu.Lock()
	defer a.mu.Unlock()
	var u Usage
	i := slices.IndexFunc(a.pools, func(p Pool) bool { return p.Name == pool })
	if i < 0 {
		return u
	}
	p := &a.pools[i]
	var size4, size6 int64
	for _, r := range p.Ranges {
		n := rangeSize(r, p.AvoidBuggyIPs)
		if r.First.Is4() {
			size4 = satAdd(size4, n)
		} else {
			size6 = satAdd(size6, n)
		}
	}
	for ip := range a.byIP {
		if !p.contains(ip) {
			continue
		}
		if ip.Is4() {
			u.AssignedIPv4++
		} else {
			u.AssignedIPv6++
		}
	}
	u.AvailableIPv4 = max(0, size4-u.AssignedIPv4)
	if size6 < math.MaxInt64 {
		u.AvailableIPv6 = max(0, size6-u.AssignedIPv6)
	} else {
		u.AvailableIPv6 = math.MaxInt64
	}
	return u
}

// rangeSize counts r's usable addresses, saturating at MaxInt64.
func rangeSize(r lbv1alpha1.AddressRange, avoidBuggy bool) int64 {
	f, l := r.First.AsSlice(), r.Last.AsSlice()
	// Differences above 63 bits saturate: only the last 8 bytes matter
	// once the leading ones agree.
	for i := 0; i < len(f)-8; i++ {
		if f[i] != l[i] {
			return math.MaxInt64
		}
	}
	var fv, lv uint64
	for _, b := range f[len(f)-min(8, len(f)):] {
		fv = fv<<8 | uint64(b)
	}
	for _, b := range l[len(l)-min(8, len(l)):] {
		lv = lv<<8 | uint64(b)
	}
	d := lv - fv
	if d >= math.MaxInt64 {
		return math.MaxInt64
	}
	n := int64(d) + 1
	if avoidBuggy && r.First.Is4() {
		lo, hi := int64(fv), int64(lv)
		n -= countLastOctet(lo, hi, 0) + countLastOctet(lo, hi, 255)
	}
	return n
}

// countLastOctet counts the x in [lo, hi] with x%256 == o.
func countLastOctet(lo, hi, o int64) int64 {
	below := func(x int64) int64 { // how many y in [0, x] have y%256 == o
		if x < o {
			return 0
		}
		return (x-o)/256 + 1
	}
	return below(hi) - below(lo-1)
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
