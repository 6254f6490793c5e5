// Package policy reads NetworkPolicies as upstream defines them: which
// pods a policy selects, which directions it isolates, and, rule by rule,
// which peers and ports it allows. It knows nothing of nftables; the
// ruleset package renders what it resolves.
package policy

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	cnp "sigs.k8s.io/network-policy-api/apis/v1beta1"
)

// Pod is what policies read of a pod.
type Pod struct {
	Namespace, Name string
	Labels          map[string]string
	// IPs are the pod's IPv4 addresses; a pod without any is neither
	// policed nor a peer yet.
	IPs []netip.Addr
	// Node is the node the pod runs on.
	Node string
	// HostNetwork pods are neither policed nor selected as peers: their
	// address is their node's.
	HostNetwork bool
	// Ports are the named container ports, for policies' named ports.
	Ports []NamedPort
}

// NamedPort is a container port with a name.
type NamedPort struct {
	Name     string
	Protocol corev1.Protocol
	Port     int32
}

// State is the cluster as this node's agent sees it.
type State struct {
	// Node is the node whose pods are policed.
	Node       string
	Pods       []*Pod
	Namespaces map[string]map[string]string // name → labels
	Policies   []*networkingv1.NetworkPolicy
	// ClusterPolicies are the ClusterNetworkPolicies of both tiers.
	ClusterPolicies []*cnp.ClusterNetworkPolicy
	// PodCIDRs are the node's IPv4 pod ranges (its Node's spec.podCIDRs),
	// when known.
	PodCIDRs []netip.Prefix
}

// Direction is ingress (traffic to a policed pod) or egress (from it).
type Direction string

// The two directions, as policyTypes names them.
const (
	Ingress Direction = "ingress"
	Egress  Direction = "egress"
)

// Types returns the directions a policy isolates, with upstream's
// defaulting: Ingress always, Egress when the policy has egress rules,
// unless policyTypes says otherwise.
func Types(p *networkingv1.NetworkPolicy) (ingress, egress bool) {
	if len(p.Spec.PolicyTypes) == 0 {
		return true, len(p.Spec.Egress) > 0
	}
	for _, t := range p.Spec.PolicyTypes {
		switch t {
		case networkingv1.PolicyTypeIngress:
			ingress = true
		case networkingv1.PolicyTypeEgress:
			egress = true
		}
	}
	return ingress, egress
}

// Resolved is the policies resolved against the cluster: for each
// policed local pod, per direction, the rules that allow traffic.
type Resolved struct {
	// Pods are the local pods some policy isolates, by namespace/name.
	Pods []*PodRules
	// Problems are what made part of a policy match nothing (a selector
	// that does not parse): said once per sync by the caller.
	Problems []string
	// PodCIDRs are the node's pod ranges and LocalAddrs the sorted
	// addresses of its pods the agent knows: traffic to an address of the
	// ranges that no known pod has is a pod whose rules are not yet in
	// place, and gets nothing.
	PodCIDRs   []netip.Prefix
	LocalAddrs []netip.Addr

	// byAddr indexes Pods by address, for Allows.
	byAddr map[netip.Addr]*PodRules
}

// PodRules are the allowing rules of one policed pod.
type PodRules struct {
	Pod *Pod
	// Isolated says which directions some NetworkPolicy isolates; a
	// direction isolated with no rule allows nothing.
	IngressIsolated, EgressIsolated bool
	// IngressPolicies and EgressPolicies name the NetworkPolicies that
	// isolate it (namespace/name), for logs.
	IngressPolicies, EgressPolicies []string
	Ingress, Egress                 []*Rule
	// AdminIngress ... are the ClusterNetworkPolicy rules of the Admin and
	// Baseline tiers whose subject is the pod, in the order they are
	// evaluated: by priority, then by policy name, then rule by rule.
	AdminIngress, AdminEgress       []*Rule
	BaselineIngress, BaselineEgress []*Rule
}

// Policed says whether anything decides the pod's traffic in dir.
func (p *PodRules) Policed(dir Direction) bool {
	if dir == Ingress {
		return p.IngressIsolated || len(p.AdminIngress) > 0 || len(p.BaselineIngress) > 0
	}
	return p.EgressIsolated || len(p.AdminEgress) > 0 || len(p.BaselineEgress) > 0
}

// Tiers returns the pod's rules in dir: Admin tier, whether a NetworkPolicy
// isolates it, its NetworkPolicy rules, Baseline tier.
func (p *PodRules) Tiers(dir Direction) (admin []*Rule, isolated bool, rules, baseline []*Rule) {
	if dir == Ingress {
		return p.AdminIngress, p.IngressIsolated, p.Ingress, p.BaselineIngress
	}
	return p.AdminEgress, p.EgressIsolated, p.Egress, p.BaselineEgress
}

// Rule is one ingress or egress rule of a policy, as it applies to one
// pod: traffic from (ingress) or to (egress) any of Peers, on any of
// Ports, is allowed (a NetworkPolicy's) or gets Action (a
// ClusterNetworkPolicy's).
type Rule struct {
	// Policy is namespace/name (a ClusterNetworkPolicy's name alone),
	// Index the rule's position in it.
	Policy string
	Index  int
	// Action is a ClusterNetworkPolicy rule's: Accept, Deny or Pass; empty
	// for a NetworkPolicy's, which allows.
	Action string
	// AllPeers means the rule names no peer: everyone.
	AllPeers bool
	// PeerSets are the pods its selector peers match, one set per peer.
	PeerSets []*PeerSet
	// Blocks are its ipBlocks.
	Blocks []Block
	// AllPorts means the rule names no port.
	AllPorts bool
	// Ports are the numbered ports and ranges (named ones of an ingress
	// rule resolved on the pod).
	Ports []Port
	// NamedDest, for an egress rule, are its named ports resolved on each
	// peer pod: traffic to that address on that protocol and port.
	NamedDest []Endpoint
	// namedPorts are a ClusterNetworkPolicy rule's named ports, resolved on
	// each policed pod for ingress.
	namedPorts []string
}

// PeerSet is the pods one peer's selectors match. Peers that select the
// same way (the same selectors, and the same namespace for a podSelector
// alone) share one PeerSet, whatever policy names them.
type PeerSet struct {
	// Key says what selects the pods, canonically: "namespace NS pods SEL"
	// or "namespaces NSSEL pods SEL".
	Key string
	// Addrs are the pods' addresses, sorted.
	Addrs []netip.Addr
}

// Block is an ipBlock: CIDR less Except.
type Block struct {
	CIDR   netip.Prefix
	Except []netip.Prefix
}

// Port is a protocol with a port, a range, or (Port 0) every port.
type Port struct {
	Protocol corev1.Protocol
	Port     int32
	EndPort  int32
}

// Endpoint is a pod address with a protocol and port.
type Endpoint struct {
	Addr     netip.Addr
	Protocol corev1.Protocol
	Port     int32
}

// Resolve resolves every policy against the state.
func Resolve(s *State) *Resolved {
	r := &resolver{state: s, out: &Resolved{PodCIDRs: s.PodCIDRs}, byNS: map[string][]*Pod{}, localByNS: map[string][]*Pod{}, peers: map[string]*PeerSet{}, byPod: map[*Pod]*PodRules{}}
	for _, pod := range s.Pods {
		if !peerable(pod) {
			continue
		}
		r.byNS[pod.Namespace] = append(r.byNS[pod.Namespace], pod)
		if pod.Node == s.Node {
			r.localByNS[pod.Namespace] = append(r.localByNS[pod.Namespace], pod)
			r.out.LocalAddrs = append(r.out.LocalAddrs, pod.IPs...)
		}
	}
	slices.SortFunc(r.out.LocalAddrs, netip.Addr.Compare)
	r.out.LocalAddrs = slices.Compact(r.out.LocalAddrs)
	policies := slices.Clone(s.Policies)
	slices.SortFunc(policies, func(a, b *networkingv1.NetworkPolicy) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	for _, p := range policies {
		ingress, egress := Types(p)
		sel, ok := r.selector(p, "spec.podSelector", &p.Spec.PodSelector)
		if !ok {
			continue
		}
		for _, pod := range r.localByNS[p.Namespace] {
			if !sel.Matches(labels.Set(pod.Labels)) {
				continue
			}
			pr := r.podRules(pod)
			if ingress {
				pr.IngressIsolated = true
				pr.IngressPolicies = append(pr.IngressPolicies, p.Namespace+"/"+p.Name)
				for i, rule := range p.Spec.Ingress {
					pr.Ingress = append(pr.Ingress, r.rule(p, Ingress, i, rule.From, rule.Ports, pod))
				}
			}
			if egress {
				pr.EgressIsolated = true
				pr.EgressPolicies = append(pr.EgressPolicies, p.Namespace+"/"+p.Name)
				for i, rule := range p.Spec.Egress {
					pr.Egress = append(pr.Egress, r.rule(p, Egress, i, rule.To, rule.Ports, pod))
				}
			}
		}
	}
	r.resolveCluster()
	slices.SortFunc(r.out.Pods, func(a, b *PodRules) int {
		return cmp.Or(cmp.Compare(a.Pod.Namespace, b.Pod.Namespace), cmp.Compare(a.Pod.Name, b.Pod.Name))
	})
	return r.out
}

type resolver struct {
	state *State
	out   *Resolved
	// byNS and localByNS index the pods that can be peers or policed.
	byNS, localByNS map[string][]*Pod
	// peers are the peer sets resolved so far, by key: many policies and
	// pods share them.
	peers map[string]*PeerSet
	byPod map[*Pod]*PodRules
}

// podRules is the pod's entry in the result, made on first use.
func (r *resolver) podRules(pod *Pod) *PodRules {
	pr := r.byPod[pod]
	if pr == nil {
		pr = &PodRules{Pod: pod}
		r.byPod[pod] = pr
		r.out.Pods = append(r.out.Pods, pr)
	}
	return pr
}

// selector parses a label selector; one that does not parse selects
// nothing, and says so.
func (r *resolver) selector(p *networkingv1.NetworkPolicy, field string, s *metav1.LabelSelector) (labels.Selector, bool) {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		r.out.Problems = append(r.out.Problems, fmt.Sprintf("%s/%s: %s: %v (it selects nothing)", p.Namespace, p.Name, field, err))
		return nil, false
	}
	return sel, true
}

func (r *resolver) rule(p *networkingv1.NetworkPolicy, dir Direction, index int, peers []networkingv1.NetworkPolicyPeer, ports []networkingv1.NetworkPolicyPort, pod *Pod) *Rule {
	rule := &Rule{Policy: p.Namespace + "/" + p.Name, Index: index, AllPeers: len(peers) == 0, AllPorts: len(ports) == 0}
	field := fmt.Sprintf("spec.%s[%d].from", dir, index)
	if dir == Egress {
		field = fmt.Sprintf("spec.%s[%d].to", dir, index)
	}
	rule.PeerSets, rule.Blocks = r.resolvePeers(p, field, peers)
	for i, port := range ports {
		proto := corev1.ProtocolTCP
		if port.Protocol != nil {
			proto = *port.Protocol
		}
		if proto != corev1.ProtocolTCP && proto != corev1.ProtocolUDP && proto != corev1.ProtocolSCTP {
			r.out.Problems = append(r.out.Problems, fmt.Sprintf("%s/%s: spec.%s[%d].ports[%d].protocol: %q is not TCP, UDP or SCTP (the port matches nothing)", p.Namespace, p.Name, dir, index, i, proto))
			continue
		}
		switch {
		case port.Port == nil:
			rule.Ports = append(rule.Ports, Port{Protocol: proto})
		case port.Port.Type == intstr.Int:
			end := int32(0)
			if port.EndPort != nil {
				end = *port.EndPort
			}
			if port.Port.IntVal < 1 || port.Port.IntVal > 65535 || end > 65535 {
				r.out.Problems = append(r.out.Problems, fmt.Sprintf("%s/%s: spec.%s[%d].ports[%d]: port %d, endPort %d out of 1-65535 (the port matches nothing)", p.Namespace, p.Name, dir, index, i, port.Port.IntVal, end))
				continue
			}
			rule.Ports = append(rule.Ports, Port{Protocol: proto, Port: port.Port.IntVal, EndPort: end})
		case dir == Ingress:
			// A named port is the policed pod's own.
			if n, ok := namedPort(pod, port.Port.StrVal, proto); ok {
				rule.Ports = append(rule.Ports, Port{Protocol: proto, Port: n})
			}
		default:
			rule.NamedDest = append(rule.NamedDest, r.namedDest(rule, port.Port.StrVal, proto)...)
		}
	}
	slices.SortFunc(rule.NamedDest, func(a, b Endpoint) int {
		return cmp.Or(a.Addr.Compare(b.Addr), cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(a.Port, b.Port))
	})
	rule.NamedDest = slices.Compact(rule.NamedDest)
	return rule
}

// namedDest resolves an egress named port on the rule's peer pods (or, with
// no peers, on every pod); ipBlock peers have no container ports to name.
// An empty proto matches the name on any protocol (a ClusterNetworkPolicy's
// destinationNamedPort).
func (r *resolver) namedDest(rule *Rule, name string, proto corev1.Protocol) []Endpoint {
	var out []Endpoint
	for _, pod := range r.state.Pods {
		if !peerable(pod) {
			continue
		}
		for _, np := range pod.Ports {
			if np.Name != name || (proto != "" && np.Protocol != proto) {
				continue
			}
			for _, ip := range pod.IPs {
				if rule.AllPeers || rule.hasPeer(ip) {
					out = append(out, Endpoint{ip, np.Protocol, np.Port})
				}
			}
		}
	}
	return out
}

func namedPort(pod *Pod, name string, proto corev1.Protocol) (int32, bool) {
	for _, p := range pod.Ports {
		if p.Name == name && p.Protocol == proto {
			return p.Port, true
		}
	}
	return 0, false
}

func peerable(pod *Pod) bool { return !pod.HostNetwork && len(pod.IPs) > 0 }

// resolvePeers returns a rule's peer sets, one per selector peer, and its
// ipBlocks.
func (r *resolver) resolvePeers(p *networkingv1.NetworkPolicy, field string, peers []networkingv1.NetworkPolicyPeer) ([]*PeerSet, []Block) {
	var sets []*PeerSet
	var blocks []Block
	for i, peer := range peers {
		if b := peer.IPBlock; b != nil {
			cidr, err := netip.ParsePrefix(b.CIDR)
			if err != nil {
				r.out.Problems = append(r.out.Problems, fmt.Sprintf("%s/%s: %s[%d].ipBlock.cidr: %v", p.Namespace, p.Name, field, i, err))
				continue
			}
			if !cidr.Addr().Is4() {
				continue // IPv4 traffic is policed; an IPv6 block matches none of it
			}
			block := Block{CIDR: cidr.Masked()}
			for j, e := range b.Except {
				ep, err := netip.ParsePrefix(e)
				if err != nil {
					r.out.Problems = append(r.out.Problems, fmt.Sprintf("%s/%s: %s[%d].ipBlock.except[%d]: %v", p.Namespace, p.Name, field, i, j, err))
					continue
				}
				if ep.Addr().Is4() {
					block.Except = append(block.Except, ep.Masked())
				}
			}
			blocks = append(blocks, block)
			continue
		}
		if set := r.peerSet(p, fmt.Sprintf("%s[%d]", field, i), peer); set != nil {
			sets = append(sets, set)
		}
	}
	return sets, blocks
}

// peerSet resolves one selector peer: podSelector alone selects in the
// policy's namespace, namespaceSelector alone every pod of the namespaces
// it selects, both together the pods podSelector selects in those
// namespaces. nil when a selector does not parse.
func (r *resolver) peerSet(p *networkingv1.NetworkPolicy, field string, peer networkingv1.NetworkPolicyPeer) *PeerSet {
	podSel := labels.Everything()
	if peer.PodSelector != nil {
		s, ok := r.selector(p, field+".podSelector", peer.PodSelector)
		if !ok {
			return nil
		}
		podSel = s
	}
	var nsSel labels.Selector
	if peer.NamespaceSelector != nil {
		s, ok := r.selector(p, field+".namespaceSelector", peer.NamespaceSelector)
		if !ok {
			return nil
		}
		nsSel = s
	}
	return r.peerSetOf(p.Namespace, nsSel, podSel)
}

// peerSetOf is the pods podSel selects in namespace ns, or, when nsSel is
// set, in the namespaces it selects.
func (r *resolver) peerSetOf(ns string, nsSel, podSel labels.Selector) *PeerSet {
	pods := podSel.String()
	if pods == "" {
		pods = "all"
	}
	key := "namespace " + ns + " pods " + pods
	if nsSel != nil {
		namespaces := nsSel.String()
		if namespaces == "" {
			namespaces = "all"
		}
		key = "namespaces " + namespaces + " pods " + pods
	}
	if set, ok := r.peers[key]; ok {
		return set
	}
	set := &PeerSet{Key: key}
	add := func(ns string) {
		for _, pod := range r.byNS[ns] {
			if podSel.Matches(labels.Set(pod.Labels)) {
				set.Addrs = append(set.Addrs, pod.IPs...)
			}
		}
	}
	if nsSel == nil {
		add(ns)
	} else {
		for ns, nsLabels := range r.state.Namespaces {
			if nsSel.Matches(labels.Set(nsLabels)) {
				add(ns)
			}
		}
	}
	slices.SortFunc(set.Addrs, netip.Addr.Compare)
	set.Addrs = slices.Compact(set.Addrs)
	r.peers[key] = set
	return set
}
