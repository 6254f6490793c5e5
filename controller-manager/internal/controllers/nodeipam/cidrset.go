package nodeipam

import (
	"errors"
	"fmt"
	"math/big"
	"net/netip"
)

// maxSubnetBits bounds how many node subnets one cluster CIDR may hold
// (2^16), as upstream: a bigger set would take too much memory.
const maxSubnetBits = 16

// ErrFull is returned when every subnet of a cluster CIDR is taken.
var ErrFull = errors.New("no pod CIDR left in the cluster CIDR")

// CIDRSet hands out the subnets of mask size Mask within Cluster.
type CIDRSet struct {
	Cluster netip.Prefix
	Mask    int
	used    map[int]bool
	next    int
	count   int
}

// NewCIDRSet returns the subnets of mask bits of cluster, all free.
func NewCIDRSet(cluster netip.Prefix, mask int) (*CIDRSet, error) {
	cluster = cluster.Masked()
	if mask < cluster.Bits() || mask > cluster.Addr().BitLen() {
		return nil, fmt.Errorf("node mask size %d does not fit cluster CIDR %s", mask, cluster)
	}
	if mask-cluster.Bits() > maxSubnetBits {
		return nil, fmt.Errorf("node mask size %d makes more than 2^%d subnets of cluster CIDR %s", mask, maxSubnetBits, cluster)
	}
	return &CIDRSet{Cluster: cluster, Mask: mask, used: map[int]bool{}, count: 1 << (mask - cluster.Bits())}, nil
}

// Allocate takes the next free subnet.
func (s *CIDRSet) Allocate() (netip.Prefix, error) {
	for i := range s.count {
		idx := (s.next + i) % s.count
		if !s.used[idx] {
			s.used[idx] = true
			s.next = (idx + 1) % s.count
			return s.subnet(idx), nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("%w %s", ErrFull, s.Cluster)
}

// Occupy marks every subnet overlapping p as taken; p outside the cluster
// CIDR is ignored.
func (s *CIDRSet) Occupy(p netip.Prefix) { s.mark(p, true) }

// Release frees the subnets p covers.
func (s *CIDRSet) Release(p netip.Prefix) { s.mark(p, false) }

// Free is the number of free subnets.
func (s *CIDRSet) Free() int { return s.count - len(s.used) }

func (s *CIDRSet) mark(p netip.Prefix, used bool) {
	p = p.Masked()
	if !s.Cluster.Overlaps(p) || p.Addr().BitLen() != s.Cluster.Addr().BitLen() {
		return
	}
	// Clip p to the cluster CIDR, then find the subnet range it spans.
	if p.Bits() < s.Cluster.Bits() {
		p = s.Cluster
	}
	first := s.index(p.Addr())
	n := 1
	if p.Bits() < s.Mask {
		n = 1 << (s.Mask - p.Bits())
	}
	for i := first; i < first+n && i < s.count; i++ {
		if used {
			s.used[i] = true
		} else {
			delete(s.used, i)
		}
	}
}

// index is the number of the subnet holding addr.
func (s *CIDRSet) index(addr netip.Addr) int {
	off := new(big.Int).Sub(addrInt(addr), addrInt(s.Cluster.Addr()))
	off.Rsh(off, uint(addr.BitLen()-s.Mask))
	return int(off.Int64())
}

func (s *CIDRSet) subnet(idx int) netip.Prefix {
	v := new(big.Int).Lsh(big.NewInt(int64(idx)), uint(s.Cluster.Addr().BitLen()-s.Mask))
	v.Add(v, addrInt(s.Cluster.Addr()))
	b := v.FillBytes(make([]byte, s.Cluster.Addr().BitLen()/8))
	addr, _ := netip.AddrFromSlice(b)
	return netip.PrefixFrom(addr, s.Mask)
}

func addrInt(a netip.Addr) *big.Int { return new(big.Int).SetBytes(a.AsSlice()) }
