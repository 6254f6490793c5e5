// Package ruleset renders resolved policies as one nftables table, inet
// trireme-netpol, and writes it:
//
//   - base chains on the forward and input hooks let established and
//     related traffic pass, then dispatch through the verdict maps
//     egress-pods (by source) and ingress-pods (by destination) to one
//     chain per policed pod and direction;
//   - a pod's chain returns on the first rule that allows the packet
//     (counted per policy rule) and drops the rest (counted per pod);
//   - the pods a rule's selectors match are the elements of one set per
//     rule, shared by every pod the rule applies to, so that a peer's
//     labels changing changes elements, not rules.
//
// The output hook is not policed: the node reaches its pods (kubelet
// probes pass under a default-deny ingress policy), and traffic to a
// Service is seen after the proxy's DNAT, on the destination pod.
package ruleset

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/knftables"

	"trireme.dev/netpol/internal/policy"
)

// Table is the name of the table; its family is inet.
const Table = "trireme-netpol"

// Family is the table's family.
const Family = knftables.InetFamily

// The table's fixed objects.
const (
	forwardChain = "forward"
	inputChain   = "input"
	ingressMap   = "ingress-pods"
	egressMap    = "egress-pods"
	localPods    = "local-pods"
)

// UnknownPodDrops names the counter of packets dropped on their way to a
// pod whose rules are not yet in place.
const UnknownPodDrops = "drop-unknown-pods"

// Objects are the table's content, desired or found: what a sync writes
// and what it deletes.
type Objects struct {
	// logGroup, when not 0, is the NFLOG group denied packets are logged
	// to, at most logRate a second per rule.
	logGroup uint16

	Chains   map[string]*knftables.Chain
	Rules    map[string][]*knftables.Rule // by chain
	Sets     map[string]*knftables.Set
	Maps     map[string]*knftables.Map
	Elements map[string][]*knftables.Element // by set or map
	Counters map[string]*knftables.Counter
}

func newObjects() *Objects {
	return &Objects{
		Chains: map[string]*knftables.Chain{}, Rules: map[string][]*knftables.Rule{}, Sets: map[string]*knftables.Set{},
		Maps: map[string]*knftables.Map{}, Elements: map[string][]*knftables.Element{}, Counters: map[string]*knftables.Counter{},
	}
}

// Render turns resolved policies into the table's objects.
func Render(res *policy.Resolved) *Objects { return RenderLogged(res, 0) }

// RenderLogged is Render with the packets each drop rule drops logged to
// NFLOG group (0: none), rate-limited, with a prefix naming the kind of
// drop and what it drops for: "np DIRECTION NAMESPACE/POD", "cnp
// DIRECTION POLICY RULE" or "unknown".
func RenderLogged(res *policy.Resolved, group uint16) *Objects {
	o := newObjects()
	o.logGroup = group
	hook := func(name string, h knftables.BaseChainHook) {
		o.Chains[name] = &knftables.Chain{
			Name: name, Type: ptr.To(knftables.FilterType), Hook: ptr.To(h),
			// Before the filter chains of iptables and others, so that they
			// cannot accept what a policy denies.
			Priority: ptr.To(knftables.FilterPriority + "-5"),
			Comment:  ptr.To("NetworkPolicy of pods: trireme-netpol"),
		}
	}
	hook(forwardChain, knftables.ForwardHook)
	hook(inputChain, knftables.InputHook)
	o.Maps[ingressMap] = &knftables.Map{Name: ingressMap, Type: "ipv4_addr : verdict", Comment: ptr.To("policed pods: their ingress chain")}
	o.Maps[egressMap] = &knftables.Map{Name: egressMap, Type: "ipv4_addr : verdict", Comment: ptr.To("policed pods: their egress chain")}
	established := "ct state established,related accept"
	o.rule(forwardChain, established)
	o.rule(forwardChain, "ip saddr vmap @"+egressMap)
	o.rule(forwardChain, "ip daddr vmap @"+ingressMap)
	if len(res.PodCIDRs) > 0 {
		// A pod whose address the agent does not know yet gets nothing:
		// its policies may forbid what would reach it.
		o.Sets[localPods] = &knftables.Set{Name: localPods, Type: "ipv4_addr", Comment: ptr.To("this node's pods the agent knows")}
		for _, a := range res.LocalAddrs {
			o.Elements[localPods] = append(o.Elements[localPods], &knftables.Element{Set: localPods, Key: []string{a.String()}})
		}
		cidrs := make([]string, len(res.PodCIDRs))
		for i, c := range res.PodCIDRs {
			cidrs[i] = c.String()
		}
		o.Counters[UnknownPodDrops] = &knftables.Counter{Name: UnknownPodDrops, Comment: ptr.To("drops to pods whose rules are not yet in place")}
		unknown := "ip daddr { " + strings.Join(cidrs, ", ") + " } ip daddr != @" + localPods
		o.logDrop(forwardChain, unknown, "unknown")
		o.rule(forwardChain, unknown, "counter name", quote(UnknownPodDrops), "drop")
	}
	o.rule(inputChain, established)
	o.rule(inputChain, "ip saddr vmap @"+egressMap)

	for _, pr := range res.Pods {
		if pr.Policed(policy.Ingress) {
			o.podChain(pr, policy.Ingress, ingressMap)
		}
		if pr.Policed(policy.Egress) {
			o.podChain(pr, policy.Egress, egressMap)
		}
	}
	return o
}

func (o *Objects) rule(chain string, parts ...string) {
	var nonEmpty []string
	for _, p := range parts {
		if p != "" {
			nonEmpty = append(nonEmpty, p)
		}
	}
	o.Rules[chain] = append(o.Rules[chain], &knftables.Rule{Chain: chain, Rule: knftables.Concat(nonEmpty)})
}

// podChain writes a policed pod's chain for one direction and points the
// direction's map at it for each of the pod's addresses. Admin tier rules
// come first: Accept returns (to the next check), Deny drops, Pass goes to
// the pod's second chain, where the rest of the chain would go anyway.
// There, a pod some NetworkPolicy isolates gets its rules and a drop;
// another pod, the Baseline tier's rules, and passes.
func (o *Objects) podChain(pr *policy.PodRules, dir policy.Direction, dispatch string) {
	pod := pr.Pod
	id := pod.Namespace + "/" + pod.Name
	chain := name(string(dir), id)
	o.Chains[chain] = &knftables.Chain{Name: chain, Comment: ptr.To(string(dir) + " of pod " + id)}
	for _, ip := range pod.IPs {
		o.Elements[dispatch] = append(o.Elements[dispatch], &knftables.Element{Map: dispatch, Key: []string{ip.String()}, Value: []string{"jump " + chain}})
	}
	admin, isolated, rules, baseline := pr.Tiers(dir)
	tier2 := chain
	if len(admin) > 0 {
		tier2 = name("tier2-"+string(dir), id)
		o.Chains[tier2] = &knftables.Chain{Name: tier2, Comment: ptr.To(string(dir) + " of pod " + id + " after the Admin tier")}
		for _, r := range admin {
			o.match(chain, dir, r, o.clusterVerdict(dir, r, tier2))
		}
		o.rule(chain, "goto", tier2)
	}
	if !isolated {
		for _, r := range baseline {
			o.match(tier2, dir, r, o.clusterVerdict(dir, r, ""))
		}
		return
	}
	for _, r := range rules {
		ruleID := fmt.Sprintf("%s/%s/%d", r.Policy, dir, r.Index)
		accepts := name("accept", ruleID)
		o.Counters[accepts] = &knftables.Counter{Name: accepts, Comment: ptr.To("accepted by " + r.Policy + " " + string(dir) + " rule " + strconv.Itoa(r.Index))}
		o.match(tier2, dir, r, []string{"counter name", quote(accepts), "return"})
	}
	drops := name("drop-"+string(dir), id)
	o.Counters[drops] = &knftables.Counter{Name: drops, Comment: ptr.To(string(dir) + " drops of pod " + id)}
	o.logDrop(tier2, "", fmt.Sprintf("np %s %s", dir, id))
	o.rule(tier2, "counter name", quote(drops), "drop")
}

// clusterVerdict is what a ClusterNetworkPolicy rule does once matched,
// counted per rule: Accept returns, Deny drops, Pass goes to tier2 (in
// the Baseline tier, where tier2 is "", it returns: the default allows).
func (o *Objects) clusterVerdict(dir policy.Direction, r *policy.Rule, tier2 string) []string {
	ruleID := fmt.Sprintf("%s/%s/%d/%s", r.Policy, dir, r.Index, r.Action)
	counter := name("cnp", ruleID)
	o.Counters[counter] = &knftables.Counter{Name: counter, Comment: ptr.To(r.Action + " by ClusterNetworkPolicy " + r.Policy + " " + string(dir) + " rule " + strconv.Itoa(r.Index))}
	verdict := "return"
	switch {
	case r.Action == "Deny":
		verdict = "drop"
	case r.Action == "Pass" && tier2 != "":
		verdict = "goto " + tier2
	}
	return []string{"counter name", quote(counter), verdict}
}

// match writes the rules of one policy rule into a pod's chain, one per
// peer kind and port, each ending in verdict.
func (o *Objects) match(chain string, dir policy.Direction, r *policy.Rule, verdict []string) {
	// A ClusterNetworkPolicy's Deny is logged, when asked, by a rule of
	// the same match before it.
	logPrefix := ""
	if verdict[len(verdict)-1] == "drop" {
		logPrefix = fmt.Sprintf("cnp %s %s %d", dir, r.Policy, r.Index)
	}
	ruleID := fmt.Sprintf("%s/%s/%d", r.Policy, dir, r.Index)
	addrField := "ip saddr"
	if dir == policy.Egress {
		addrField = "ip daddr"
	}

	var peers []string
	switch {
	case r.AllPeers:
		peers = []string{""}
	default:
		for _, ps := range r.PeerSets {
			// A set per selector, shared by the rules that select alike.
			set := "peers-" + hash(ps.Key, 16)
			o.addrSet(set, ps.Key, ps.Addrs)
			peers = append(peers, addrField+" @"+set)
		}
		for _, b := range r.Blocks {
			m := addrField + " " + b.CIDR.String()
			if len(b.Except) > 0 {
				ex := make([]string, len(b.Except))
				for i, e := range b.Except {
					ex[i] = e.String()
				}
				m += " " + addrField + " != { " + strings.Join(ex, ", ") + " }"
			}
			peers = append(peers, m)
		}
	}

	var ports []string
	if r.AllPorts {
		ports = []string{""}
	}
	for _, p := range r.Ports {
		proto := strings.ToLower(string(p.Protocol))
		switch {
		case p.Port == 0:
			ports = append(ports, "meta l4proto "+proto)
		case p.EndPort > p.Port:
			ports = append(ports, fmt.Sprintf("%s dport %d-%d", proto, p.Port, p.EndPort))
		default:
			ports = append(ports, fmt.Sprintf("%s dport %d", proto, p.Port))
		}
	}
	for _, peer := range peers {
		for _, port := range ports {
			o.logDrop(chain, peer+" "+port, logPrefix)
			o.rule(chain, append([]string{peer, port}, verdict...)...)
		}
	}
	if len(r.NamedDest) > 0 {
		// Named egress ports are per destination pod: the set holds each
		// peer's address with its port of that name.
		set := name("named", ruleID)
		o.Sets[set] = &knftables.Set{Name: set, Type: "ipv4_addr . inet_proto . inet_service", Comment: ptr.To("named ports of " + r.Policy + " egress rule " + strconv.Itoa(r.Index))}
		for _, e := range r.NamedDest {
			o.Elements[set] = append(o.Elements[set], &knftables.Element{Set: set, Key: []string{e.Addr.String(), strings.ToLower(string(e.Protocol)), strconv.Itoa(int(e.Port))}})
		}
		o.logDrop(chain, "ip daddr . meta l4proto . th dport @"+set, logPrefix)
		o.rule(chain, append([]string{"ip daddr . meta l4proto . th dport @" + set}, verdict...)...)
	}
}

func (o *Objects) addrSet(set, comment string, addrs []netip.Addr) {
	if _, done := o.Sets[set]; done {
		return
	}
	o.Sets[set] = &knftables.Set{Name: set, Type: "ipv4_addr", Comment: ptr.To(comment)}
	for _, a := range addrs {
		o.Elements[set] = append(o.Elements[set], &knftables.Element{Set: set, Key: []string{a.String()}})
	}
}

// name makes an object name from a kind and an id (namespace/name...):
// readable, unique by a hash of the id, and within nftables' limit.
func name(kind, id string) string {
	n := kind + "-" + hash(kind+"\x00"+id, 8) + "-" + id
	if len(n) > 200 {
		n = n[:200]
	}
	return n
}

// logDrop writes, when the table logs drops, a rule that logs what match
// matches to the NFLOG group with prefix, at most 10 packets a second:
// a rule of its own, since a limit that is reached would otherwise keep
// the drop from happening. Nothing for an empty prefix.
func (o *Objects) logDrop(chain, match, prefix string) {
	if o.logGroup == 0 || prefix == "" {
		return
	}
	if len(prefix) > 120 {
		prefix = prefix[:120]
	}
	o.rule(chain, strings.TrimSpace(match), "limit rate 10/second burst 20 packets log prefix", strconv.Quote(prefix), "group", strconv.Itoa(int(o.logGroup)))
}

// hash is n base32 characters of s's SHA-256.
func hash(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return strings.ToLower(base32.StdEncoding.EncodeToString(sum[:])[:n])
}

// quote quotes a counter's name, which holds slashes.
func quote(s string) string { return `"` + s + `"` }

// CounterID reads a named counter's name back: its kind ("drop-ingress",
// "drop-egress", "accept", "cnp") and the id it counts for (namespace/pod,
// namespace/policy/direction/rule, or policy/direction/rule/action).
func CounterID(counter string) (kind, id string, ok bool) {
	for _, k := range []string{"drop-" + string(policy.Ingress), "drop-" + string(policy.Egress), "accept", "cnp"} {
		rest, found := strings.CutPrefix(counter, k+"-")
		if found && len(rest) > 9 && rest[8] == '-' {
			return k, rest[9:], true
		}
	}
	return "", "", false
}

// Size counts the rules and set and map elements of o.
func (o *Objects) Size() (rules, elements int) {
	for _, r := range o.Rules {
		rules += len(r)
	}
	for _, e := range o.Elements {
		elements += len(e)
	}
	return rules, elements
}

// Fingerprint hashes what o's rules and elements let through, so that a
// sync can tell whether the policies in force changed.
func (o *Objects) Fingerprint() [sha256.Size]byte {
	h := sha256.New()
	for _, c := range slices.Sorted(maps.Keys(o.Rules)) {
		for _, r := range o.Rules[c] {
			fmt.Fprintf(h, "%s\x00%s\n", c, r.Rule)
		}
	}
	for _, s := range slices.Sorted(maps.Keys(o.Elements)) {
		for _, e := range o.Elements[s] {
			fmt.Fprintf(h, "%s\x00%v\x00%v\n", s, e.Key, e.Value)
		}
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
