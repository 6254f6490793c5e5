// Package conntrack cuts the established connections that the policies in
// force no longer allow. The table lets established traffic pass before
// any policy is looked at, so without this a connection opened before a
// policy forbade it would live on; deleting its conntrack entry makes its
// next packet meet the policies like a new one.
package conntrack

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"

	"trireme.dev/netpol/internal/policy"
)

// Cut deletes the IPv4 TCP, UDP and SCTP connections that res does not
// allow, and returns how many it deleted. Connections from the node's own
// addresses are left alone: the node is not policed.
func Cut(res *policy.Resolved) (uint, error) {
	local, err := localAddrs()
	if err != nil {
		return 0, err
	}
	n, err := netlink.ConntrackDeleteFilters(netlink.ConntrackTable, unix.AF_INET, filter{res: res, local: local})
	if err != nil {
		return n, fmt.Errorf("delete conntrack entries: %w", err)
	}
	return n, nil
}

// filter matches the connections res forbids.
type filter struct {
	res   *policy.Resolved
	local map[netip.Addr]bool
}

// MatchConntrackFlow implements netlink.CustomConntrackFilter.
func (f filter) MatchConntrackFlow(c *netlink.ConntrackFlow) bool {
	flow, ok := Flow(c)
	if !ok || f.local[flow.Src] {
		return false
	}
	return !f.res.Allows(flow)
}

var protocols = map[uint8]corev1.Protocol{unix.IPPROTO_TCP: corev1.ProtocolTCP, unix.IPPROTO_UDP: corev1.ProtocolUDP, unix.IPPROTO_SCTP: corev1.ProtocolSCTP}

// Flow is a conntrack entry as policies see it: the original source, and
// the destination and port after DNAT, which are the reply's source.
func Flow(c *netlink.ConntrackFlow) (policy.Flow, bool) {
	proto, ok := protocols[c.Forward.Protocol]
	if !ok {
		return policy.Flow{}, false
	}
	src, ok1 := netip.AddrFromSlice(c.Forward.SrcIP)
	dst, ok2 := netip.AddrFromSlice(c.Reverse.SrcIP)
	if !ok1 || !ok2 {
		return policy.Flow{}, false
	}
	return policy.Flow{Src: src.Unmap(), Dst: dst.Unmap(), Protocol: proto, Port: int32(c.Reverse.SrcPort)}, true
}

func localAddrs() (map[netip.Addr]bool, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("local addresses: %w", err)
	}
	out := map[netip.Addr]bool{}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out[p.Addr().Unmap()] = true
		}
	}
	return out, nil
}
