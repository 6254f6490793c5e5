package policy

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	cnp "sigs.k8s.io/network-policy-api/apis/v1beta1"
)

// resolveCluster adds the rules of every ClusterNetworkPolicy to the local
// pods its subject selects, in the order the tiers evaluate them.
func (r *resolver) resolveCluster() {
	policies := slices.Clone(r.state.ClusterPolicies)
	slices.SortFunc(policies, func(a, b *cnp.ClusterNetworkPolicy) int {
		return cmp.Or(cmp.Compare(a.Spec.Priority, b.Spec.Priority), cmp.Compare(a.Name, b.Name))
	})
	for _, p := range policies {
		admin := p.Spec.Tier == cnp.AdminTier
		if !admin && p.Spec.Tier != cnp.BaselineTier {
			r.problem(p.Name, "spec.tier", fmt.Sprintf("%q is neither Admin nor Baseline (the policy applies to nothing)", p.Spec.Tier))
			continue
		}
		subjects := r.subjects(p)
		if len(subjects) == 0 {
			continue
		}
		var ingress, egress []*Rule
		for i, rule := range p.Spec.Ingress {
			peers := make([]cnp.ClusterNetworkPolicyEgressPeer, len(rule.From))
			for j, f := range rule.From {
				peers[j] = cnp.ClusterNetworkPolicyEgressPeer{Namespaces: f.Namespaces, Pods: f.Pods}
			}
			ingress = append(ingress, r.clusterRule(p, Ingress, i, rule.Action, peers, rule.Protocols))
		}
		for i, rule := range p.Spec.Egress {
			egress = append(egress, r.clusterRule(p, Egress, i, rule.Action, rule.To, rule.Protocols))
		}
		for _, pod := range subjects {
			pr := r.podRules(pod)
			for _, rule := range ingress {
				rule := r.onPod(rule, Ingress, pod)
				if admin {
					pr.AdminIngress = append(pr.AdminIngress, rule)
				} else {
					pr.BaselineIngress = append(pr.BaselineIngress, rule)
				}
			}
			for _, rule := range egress {
				if admin {
					pr.AdminEgress = append(pr.AdminEgress, rule)
				} else {
					pr.BaselineEgress = append(pr.BaselineEgress, rule)
				}
			}
		}
	}
}

// subjects are the local pods the policy's subject selects: every pod of
// the namespaces it selects, or the pods it selects in them.
func (r *resolver) subjects(p *cnp.ClusterNetworkPolicy) []*Pod {
	var nsSel, podSel *metav1.LabelSelector
	switch s := p.Spec.Subject; {
	case s.Namespaces != nil:
		nsSel = s.Namespaces
	case s.Pods != nil:
		nsSel, podSel = &s.Pods.NamespaceSelector, &s.Pods.PodSelector
	default:
		r.problem(p.Name, "spec.subject", "selects neither namespaces nor pods (the policy applies to nothing)")
		return nil
	}
	ns, err := metav1.LabelSelectorAsSelector(nsSel)
	if err != nil {
		r.problem(p.Name, "spec.subject", err.Error())
		return nil
	}
	pods := labels.Everything()
	if podSel != nil {
		if pods, err = metav1.LabelSelectorAsSelector(podSel); err != nil {
			r.problem(p.Name, "spec.subject.pods.podSelector", err.Error())
			return nil
		}
	}
	var out []*Pod
	for name, nsLabels := range r.state.Namespaces {
		if !ns.Matches(labels.Set(nsLabels)) {
			continue
		}
		for _, pod := range r.localByNS[name] {
			if pods.Matches(labels.Set(pod.Labels)) {
				out = append(out, pod)
			}
		}
	}
	return out
}

// clusterRule resolves one rule's peers and ports. A peer Trireme cannot
// enforce (nodes, domain names: experimental fields) or that selects
// nothing it knows fails closed, as the API asks: an Accept rule matches
// nothing, a Deny or Pass rule everything.
func (r *resolver) clusterRule(p *cnp.ClusterNetworkPolicy, dir Direction, index int, action cnp.ClusterNetworkPolicyRuleAction, peers []cnp.ClusterNetworkPolicyEgressPeer, protocols []cnp.ClusterNetworkPolicyProtocol) *Rule {
	rule := &Rule{Policy: p.Name, Index: index, Action: string(action), AllPorts: len(protocols) == 0}
	field := fmt.Sprintf("spec.%s[%d]", dir, index)
	switch action {
	case cnp.ClusterNetworkPolicyRuleActionAccept, cnp.ClusterNetworkPolicyRuleActionDeny, cnp.ClusterNetworkPolicyRuleActionPass:
	default:
		r.problem(p.Name, field+".action", fmt.Sprintf("%q is not Accept, Deny or Pass (the rule matches nothing)", action))
		return rule
	}
	failClosed := func(why string) {
		r.problem(p.Name, field, why)
		if action != cnp.ClusterNetworkPolicyRuleActionAccept {
			rule.AllPeers = true
		}
	}
	for j, peer := range peers {
		switch {
		case peer.Namespaces != nil:
			if ns, err := metav1.LabelSelectorAsSelector(peer.Namespaces); err == nil {
				rule.PeerSets = append(rule.PeerSets, r.peerSetOf("", ns, labels.Everything()))
			} else {
				failClosed(fmt.Sprintf("peer %d: %v", j, err))
			}
		case peer.Pods != nil:
			ns, err1 := metav1.LabelSelectorAsSelector(&peer.Pods.NamespaceSelector)
			pods, err2 := metav1.LabelSelectorAsSelector(&peer.Pods.PodSelector)
			if err1 == nil && err2 == nil {
				rule.PeerSets = append(rule.PeerSets, r.peerSetOf("", ns, pods))
			} else {
				failClosed(fmt.Sprintf("peer %d: %v", j, cmp.Or(err1, err2)))
			}
		case len(peer.Networks) > 0:
			for _, n := range peer.Networks {
				cidr, err := netip.ParsePrefix(string(n))
				if err != nil {
					failClosed(fmt.Sprintf("peer %d: network %q: %v", j, n, err))
					continue
				}
				if cidr.Addr().Is4() {
					rule.Blocks = append(rule.Blocks, Block{CIDR: cidr.Masked()})
				}
			}
		default:
			failClosed(fmt.Sprintf("peer %d selects nothing Trireme enforces (nodes and domainNames are not supported)", j))
		}
	}
	for j, proto := range protocols {
		r.clusterPort(p, rule, fmt.Sprintf("%s.protocols[%d]", field, j), proto)
	}
	return rule
}

// clusterPort adds one protocol entry of a rule; a named port is kept for
// onPod (ingress) or resolved on the peers (egress).
func (r *resolver) clusterPort(p *cnp.ClusterNetworkPolicy, rule *Rule, field string, proto cnp.ClusterNetworkPolicyProtocol) {
	add := func(protocol corev1.Protocol, port *cnp.Port) {
		switch {
		case port == nil:
			rule.Ports = append(rule.Ports, Port{Protocol: protocol})
		case port.Range != nil:
			rule.Ports = append(rule.Ports, Port{Protocol: protocol, Port: port.Range.Start, EndPort: port.Range.End})
		default:
			rule.Ports = append(rule.Ports, Port{Protocol: protocol, Port: port.Number})
		}
	}
	switch {
	case proto.TCP != nil:
		add(corev1.ProtocolTCP, proto.TCP.DestinationPort)
	case proto.UDP != nil:
		add(corev1.ProtocolUDP, proto.UDP.DestinationPort)
	case proto.SCTP != nil:
		add(corev1.ProtocolSCTP, proto.SCTP.DestinationPort)
	case proto.DestinationNamedPort != "":
		rule.namedPorts = append(rule.namedPorts, proto.DestinationNamedPort)
		rule.NamedDest = append(rule.NamedDest, r.namedDest(rule, proto.DestinationNamedPort, "")...)
	default:
		r.problem(p.Name, field, "names no protocol (it matches nothing)")
	}
}

// onPod is the rule as it applies to the policed pod: its named ports, for
// ingress, are the pod's own.
func (r *resolver) onPod(rule *Rule, dir Direction, pod *Pod) *Rule {
	if dir != Ingress || len(rule.namedPorts) == 0 {
		return rule
	}
	out := *rule
	out.NamedDest = nil
	out.Ports = slices.Clone(rule.Ports)
	for _, name := range rule.namedPorts {
		for _, np := range pod.Ports {
			if np.Name == name {
				out.Ports = append(out.Ports, Port{Protocol: np.Protocol, Port: np.Port})
			}
		}
	}
	return &out
}

func (r *Rule) hasPeer(a netip.Addr) bool {
	for _, ps := range r.PeerSets {
		if _, ok := slices.BinarySearchFunc(ps.Addrs, a, netip.Addr.Compare); ok {
			return true
		}
	}
	return false
}

func (r *resolver) problem(policy, field, msg string) {
	r.out.Problems = append(r.out.Problems, fmt.Sprintf("ClusterNetworkPolicy %s: %s: %s", policy, field, msg))
}
