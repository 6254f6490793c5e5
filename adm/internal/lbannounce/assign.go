// Package lbannounce is trireme-vip's DaemonSet mode: it announces the
// addresses of LoadBalancer Services on the node network, as MetalLB's
// layer-2 mode does. Every node's announcer holds a Lease of its own; each
// address goes to one of the eligible nodes (Ready, its Lease live, and for
// externalTrafficPolicy: Local one with a ready endpoint of the Service),
// chosen by a stable hash, and that node puts the address on its interface
// and sends gratuitous ARP (an unsolicited Neighbor Advertisement for IPv6).
package lbannounce

import (
	"crypto/sha256"
	"net/netip"
	"slices"
)

// Node is what eligibility reads of a node.
type Node struct {
	// Name is the Node's name, which is its announcer's Lease holder.
	Name string
	// Ready is the Node's Ready condition.
	Ready bool
	// LeaseLive says the node's announcer holds its Lease and has renewed
	// it within the Lease's duration.
	LeaseLive bool
	// Excluded is set by the label
	// node.kubernetes.io/exclude-from-external-load-balancers.
	Excluded bool
}

// Service is one LoadBalancer Service's claim on an address.
type Service struct {
	// Key is namespace/name, for logs.
	Key string
	// Local is externalTrafficPolicy: Local; then only LocalNodes may
	// announce the address.
	Local bool
	// LocalNodes are the nodes with a ready endpoint of the Service.
	LocalNodes []string
}

// Eligible returns the names of the nodes that may announce an address the
// given Services share, sorted: the Ready nodes with a live Lease, not
// excluded, and, for every Service with externalTrafficPolicy: Local, with
// one of its ready endpoints, since such a node would drop traffic for it.
func Eligible(nodes []Node, services []Service) []string {
	var out []string
	for _, n := range nodes {
		if !n.Ready || !n.LeaseLive || n.Excluded {
			continue
		}
		ok := true
		for _, s := range services {
			if s.Local && !slices.Contains(s.LocalNodes, n.Name) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, n.Name)
		}
	}
	slices.Sort(out)
	return out
}

// Owner returns which of nodes announces ip, "" when nodes is empty. It is
// rendezvous hashing: the node whose hash of name and address is least.
// Every announcer computes the same owner from the same view, addresses
// spread evenly, and a node that joins or leaves moves only the addresses
// it takes or held.
func Owner(ip netip.Addr, nodes []string) string {
	var best string
	var bestSum [sha256.Size]byte
	for _, n := range nodes {
		sum := sha256.Sum256([]byte(n + "#" + ip.String()))
		if best == "" || string(sum[:]) < string(bestSum[:]) {
			best, bestSum = n, sum
		}
	}
	return best
}

// Assign returns the owner of every address in addresses (the Services
// that share each), leaving out the addresses no node may announce.
func Assign(nodes []Node, addresses map[netip.Addr][]Service) map[netip.Addr]string {
	owners := make(map[netip.Addr]string, len(addresses))
	for ip, services := range addresses {
		if owner := Owner(ip, Eligible(nodes, services)); owner != "" {
			owners[ip] = owner
		}
	}
	return owners
}
