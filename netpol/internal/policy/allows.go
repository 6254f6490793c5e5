package policy

import (
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Flow is one connection as the policed node sees it: its source, its
// destination after any DNAT, its protocol and destination port.
type Flow struct {
	Src, Dst netip.Addr
	Protocol corev1.Protocol
	Port     int32
}

// Allows says whether the policies let f through, as the table decides
// for its first packet: the source's egress rules, if the source is
// isolated for egress, and the destination's ingress rules, if it is
// isolated for ingress, must each allow it. The agent cuts established
// connections a change no longer allows by it.
func (r *Resolved) Allows(f Flow) bool {
	if r.byAddr == nil {
		r.byAddr = map[netip.Addr]*PodRules{}
		for _, p := range r.Pods {
			for _, a := range p.Pod.IPs {
				r.byAddr[a] = p
			}
		}
	}
	if p := r.byAddr[f.Src]; p != nil && !p.decide(Egress, f.Dst, f) {
		return false
	}
	if p := r.byAddr[f.Dst]; p != nil && !p.decide(Ingress, f.Src, f) {
		return false
	}
	return true
}

// decide is the tiers' verdict on f in dir, peer being its other end: the
// first Admin rule that matches decides (Pass goes on to the next tier);
// then NetworkPolicies, if one isolates the pod; else the first Baseline
// rule that matches; else the flow is allowed.
func (p *PodRules) decide(dir Direction, peer netip.Addr, f Flow) bool {
	admin, isolated, rules, baseline := p.Tiers(dir)
	for _, r := range admin {
		if r.allows(peer, f) {
			if r.Action == "Pass" {
				break
			}
			return r.Action == "Accept"
		}
	}
	if isolated {
		return anyAllows(rules, peer, f)
	}
	for _, r := range baseline {
		if r.allows(peer, f) {
			return r.Action != "Deny"
		}
	}
	return true
}

func anyAllows(rules []*Rule, peer netip.Addr, f Flow) bool {
	for _, r := range rules {
		if r.allows(peer, f) {
			return true
		}
	}
	return false
}

// allows says whether the rule matches f from (or to) peer: for a
// NetworkPolicy rule, whether it lets f through.
func (r *Rule) allows(peer netip.Addr, f Flow) bool {
	if slices.Contains(r.NamedDest, Endpoint{peer, f.Protocol, f.Port}) {
		return true
	}
	peerOK := r.AllPeers
	for _, ps := range r.PeerSets {
		_, listed := slices.BinarySearchFunc(ps.Addrs, peer, netip.Addr.Compare)
		peerOK = peerOK || listed
	}
	for _, b := range r.Blocks {
		peerOK = peerOK || b.contains(peer)
	}
	if !peerOK {
		return false
	}
	if r.AllPorts {
		return true
	}
	for _, p := range r.Ports {
		if p.Protocol != f.Protocol {
			continue
		}
		if p.Port == 0 || f.Port == p.Port || (p.EndPort > p.Port && f.Port >= p.Port && f.Port <= p.EndPort) {
			return true
		}
	}
	return false
}

func (b Block) contains(a netip.Addr) bool {
	if !b.CIDR.Contains(a) {
		return false
	}
	for _, e := range b.Except {
		if e.Contains(a) {
			return false
		}
	}
	return true
}
