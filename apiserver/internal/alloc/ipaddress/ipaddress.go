// Package ipaddress allocates Service ClusterIPs as networking.k8s.io/v1
// IPAddress objects, as upstream does: an IP is taken when its IPAddress
// object exists, so etcd's create-if-absent makes allocations unique across
// concurrent requests and apiservers, and storage is the only state to rebuild.
package ipaddress

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Labels upstream's allocator puts on the IPAddress objects it owns.
const (
	LabelIPFamily  = "ipaddress.kubernetes.io/ip-family"
	LabelManagedBy = "ipaddress.kubernetes.io/managed-by"
	ManagedBy      = "ipallocator.k8s.io"
)

// ErrAllocated means the requested IP is already taken.
var ErrAllocated = errors.New("provided IP is already allocated")

// ErrNotInRange means the requested IP is outside the service range.
var ErrNotInRange = errors.New("provided IP is not in the valid range")

// ErrFull means no IP is left in the range.
var ErrFull = errors.New("range is full")

// Storage is what the allocator needs of the IPAddress store.
type Storage interface {
	rest.Creater
	rest.GracefulDeleter
	rest.Getter
}

// Allocator hands out the IPs of one service CIDR.
type Allocator struct {
	prefix netip.Prefix
	size   int64 // usable addresses: the network address (and IPv4 broadcast) excluded
	store  Storage
}

// New returns an allocator over cidr backed by store.
func New(cidr netip.Prefix, store Storage) (*Allocator, error) {
	cidr = cidr.Masked()
	bits := cidr.Addr().BitLen() - cidr.Bits()
	if bits < 2 {
		return nil, fmt.Errorf("service CIDR %s is too small", cidr)
	}
	if bits > 62 {
		bits = 62 // more addresses than any cluster will allocate; keeps the arithmetic in int64
	}
	size := int64(1)<<bits - 1
	if cidr.Addr().Is4() {
		size-- // broadcast
	}
	return &Allocator{prefix: cidr, size: size, store: store}, nil
}

// CIDR returns the range the allocator serves.
func (a *Allocator) CIDR() netip.Prefix { return a.prefix }

// First returns the first usable IP, which the default/kubernetes Service takes.
func (a *Allocator) First() netip.Addr { return a.nth(1) }

// nth returns the address at offset n from the network address.
func (a *Allocator) nth(n int64) netip.Addr {
	base := new(big.Int).SetBytes(a.prefix.Addr().AsSlice())
	base.Add(base, big.NewInt(n))
	b := base.FillBytes(make([]byte, a.prefix.Addr().BitLen()/8))
	addr, _ := netip.AddrFromSlice(b)
	return addr
}

// Allocate takes ip for the service named by owner, or any free IP when ip
// is invalid (the zero Addr). With dryRun nothing is written but a requested
// IP is still checked.
func (a *Allocator) Allocate(ctx context.Context, owner *corev1.Service, ip netip.Addr, dryRun bool) (netip.Addr, error) {
	if ip.IsValid() {
		if !a.prefix.Contains(ip) || ip == a.prefix.Addr() || ip == a.nth(a.size+1) {
			return netip.Addr{}, ErrNotInRange
		}
		return ip, a.take(ctx, owner, ip, dryRun)
	}
	// Random probing from the upper band first leaves the lower band to the
	// IPs users ask for by number, as upstream's allocator does.
	lower := min(max(16, a.size/16), 256)
	if lower >= a.size {
		lower = 0
	}
	bands := [][2]int64{{lower + 1, a.size}, {1, lower}}
	for _, band := range bands {
		lo, hi := band[0], band[1]
		if hi < lo {
			continue
		}
		n := hi - lo + 1
		tries := min(n, 32)
		for i := int64(0); i < tries; i++ {
			cand := a.nth(lo + rand.Int64N(n))
			err := a.take(ctx, owner, cand, dryRun)
			if err == nil {
				return cand, nil
			}
			if !errors.Is(err, ErrAllocated) {
				return netip.Addr{}, err
			}
		}
		// Crowded: walk the band in order from a random start.
		start := rand.Int64N(n)
		for i := int64(0); i < n; i++ {
			cand := a.nth(lo + (start+i)%n)
			err := a.take(ctx, owner, cand, dryRun)
			if err == nil {
				return cand, nil
			}
			if !errors.Is(err, ErrAllocated) {
				return netip.Addr{}, err
			}
		}
	}
	return netip.Addr{}, ErrFull
}

func (a *Allocator) take(ctx context.Context, owner *corev1.Service, ip netip.Addr, dryRun bool) error {
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	family := string(corev1.IPv4Protocol)
	if ip.Is6() {
		family = string(corev1.IPv6Protocol)
	}
	obj := &networkingv1.IPAddress{
		ObjectMeta: metav1.ObjectMeta{
			Name:   ip.String(),
			Labels: map[string]string{LabelIPFamily: family, LabelManagedBy: ManagedBy},
		},
		Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{
			Resource: "services", Namespace: owner.Namespace, Name: owner.Name,
		}},
	}
	opts := &metav1.CreateOptions{}
	if dryRun {
		if _, err := a.store.Get(ctx, obj.Name, &metav1.GetOptions{}); err == nil {
			return ErrAllocated
		} else if !apierrors.IsNotFound(err) {
			return fmt.Errorf("look up IPAddress %s: %w", obj.Name, err)
		}
		return nil
	}
	if _, err := a.store.Create(ctx, obj, rest.ValidateAllObjectFunc, opts); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return ErrAllocated
		}
		return fmt.Errorf("create IPAddress %s: %w", obj.Name, err)
	}
	return nil
}

// Release frees ip. Releasing a free IP is not an error.
func (a *Allocator) Release(ctx context.Context, ip netip.Addr) error {
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	if _, _, err := a.store.Delete(ctx, ip.String(), rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete IPAddress %s: %w", ip, err)
	}
	return nil
}
