package nftables

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/knftables"

	"trireme.dev/componentbase/nftbatch"
	"trireme.dev/proxy/internal/backend"
	"trireme.dev/proxy/internal/model"
)

// DefaultTable is the name of the table the proxy owns.
const DefaultTable = "trireme-proxy"

// Names of the fixed chains, maps and sets.
const (
	chServices       = "services"
	chMasquerading   = "masquerading"
	chReject         = "reject-chain"
	chEndpointsCheck = "service-endpoints-check"
	chNodePortsCheck = "nodeport-endpoints-check"
	chClusterIPs     = "cluster-ips-check"
	mapServiceIPs    = "service-ips"
	mapNodePorts     = "service-nodeports"
	mapNoEndpoints   = "no-endpoint-services"
	mapNoEpNodePorts = "no-endpoint-nodeports"
	// mapEndpoints prefixes the endpoints maps, endpointBuckets of them.
	mapEndpoints    = "service-endpoints"
	endpointBuckets = 256
	setHairpin      = "hairpin"
	setNodePortIPs  = "nodeport-ips"
	// setClusterIPs holds every ClusterIP served: new connections to one
	// that no port's DNAT took are refused (a port the Service lacks)
	// rather than routed out of the node, as upstream refuses them.
	setClusterIPs = "cluster-ips"
)

// Config is what the rules depend on besides the Services.
type Config struct {
	Family model.Family
	// Table defaults to DefaultTable.
	Table string
	// ClusterCIDR is the pod network; traffic to a ClusterIP from outside
	// it is masqueraded. Invalid (zero) means "unknown": none is.
	ClusterCIDR   netip.Prefix
	MasqueradeAll bool
	MasqueradeBit int
}

// piece is what one ServicePort contributes: its own chains and sets and
// its elements in the shared maps and sets.
type piece struct {
	chains map[string][]string
	sets   map[string]int32 // affinity set name -> timeout seconds
	elems  []element
	// private are elements no other port can want (endpoints-map keys
	// are handed out per port), diffed against the port's previous piece
	// instead of going through the owners bookkeeping.
	private []endpointElem
	// hairpin are the endpoint IPs this port puts in the hairpin set,
	// which many ports share: the set holds an IP while any port needs it.
	hairpin []netip.Addr
	// ranges are the keys this port's dispatch rules own in the shared
	// endpoints map, per chain.
	ranges map[string]keyRange
}

// keyRange is a run of keys [base, base+n) in one endpoints map.
type keyRange struct {
	bucket  string
	base, n uint32
}

type element struct {
	set   string
	key   string
	value string // "" for a set
}

// endpointElem is one element of an endpoints map: key : ep. Typed rather
// than text, as a full sync holds one per endpoint.
type endpointElem struct {
	set string
	key uint32
	ep  netip.AddrPort
}

type endpointKey struct {
	set string
	key uint32
}

// Proxier is the nftables back end. It is not safe for concurrent use.
type Proxier struct {
	cfg Config
	w   nftbatch.Writer

	ip, addrType string // "ip"/"ipv4_addr" or "ip6"/"ipv6_addr"

	pieces map[model.ServicePortName]*piece
	// owners records, per shared element, the ports that want it and the
	// value each wants; what is written is the value of the first owner by
	// name, so that two Services claiming one external IP resolve the same
	// way on every node and every sync.
	owners  map[elemKey][]owner
	written map[elemKey]string
	// hairpinRefs counts, per endpoint IP, the ports that need it.
	hairpinRefs map[netip.Addr]int32
	nodeIPs     []netip.Addr
	// nextKey is, per endpoints map, the first key no port owns yet.
	// Keys are handed out in runs and never reused until a full sync
	// renumbers.
	nextKey map[string]uint32
	// buckets are the endpoints maps that exist.
	buckets map[string]bool
	// old is the pieces a render may reuse key ranges from (nil on full
	// syncs).
	old map[model.ServicePortName]*piece
	// synced is false until a full sync succeeded.
	synced bool
}

// maxKey bounds the endpoints-map keys before a full sync renumbers them.
const maxKey = 1 << 30

type elemKey struct{ set, key string }

// owner is a port that wants a shared element, and the value it wants.
type owner struct {
	name  model.ServicePortName
	value string
}

// New returns a Proxier that writes through w: a Netlink writer, or Exec
// around the nft binary or knftables.NewFake for tests.
func New(cfg Config, w nftbatch.Writer) *Proxier {
	if cfg.Table == "" {
		cfg.Table = DefaultTable
	}
	p := &Proxier{cfg: cfg, w: w, ip: "ip", addrType: "ipv4_addr"}
	if cfg.Family == model.IPv6 {
		p.ip, p.addrType = "ip6", "ipv6_addr"
	}
	p.reset()
	return p
}

// NewInterface connects to the kernel's nftables for cfg's family and table.
func NewInterface(cfg Config) (knftables.Interface, error) {
	fam := knftables.IPv4Family
	if cfg.Family == model.IPv6 {
		fam = knftables.IPv6Family
	}
	table := cfg.Table
	if table == "" {
		table = DefaultTable
	}
	nft, err := knftables.New(fam, table)
	if err != nil {
		return nil, fmt.Errorf("nftables: %w", err)
	}
	return nft, nil
}

func (p *Proxier) newTransaction() *nftbatch.Transaction {
	if nl, ok := p.w.(*nftbatch.Netlink); ok {
		return nl.NewTransaction()
	}
	fam := knftables.IPv4Family
	if p.cfg.Family == model.IPv6 {
		fam = knftables.IPv6Family
	}
	return nftbatch.NewTransaction(fam, p.cfg.Table)
}

// NewNetlink returns the nfnetlink writer of cfg's table.
func NewNetlink(cfg Config) *nftbatch.Netlink {
	fam := knftables.IPv4Family
	if cfg.Family == model.IPv6 {
		fam = knftables.IPv6Family
	}
	table := cfg.Table
	if table == "" {
		table = DefaultTable
	}
	return nftbatch.NewNetlink(fam, table)
}

func (p *Proxier) reset() {
	p.pieces = map[model.ServicePortName]*piece{}
	p.owners = map[elemKey][]owner{}
	p.written = map[elemKey]string{}
	p.hairpinRefs = map[netip.Addr]int32{}
	p.nodeIPs = nil
	p.nextKey = map[string]uint32{}
	p.buckets = map[string]bool{}
	p.synced = false
}

// Sync implements backend.Interface.
func (p *Proxier) Sync(ctx context.Context, req backend.Request) (backend.Result, error) {
	full := req.Full || !p.synced
	for _, k := range p.nextKey {
		full = full || k > maxKey
	}
	var stale []string
	if full {
		// Chains and sets of ours that the new rules do not mention are
		// deleted; listing them is the only way to find what an earlier
		// process left.
		for _, kind := range []string{"chain", "set", "map"} {
			names, err := p.w.List(ctx, kind)
			if err != nil && !nftbatch.IsNotFound(err) {
				return backend.Result{}, fmt.Errorf("list nftables %ss: %w", kind, err)
			}
			for _, n := range names {
				stale = append(stale, kind+" "+n)
			}
		}
	}
	tx, commit := p.Plan(req, full, stale)
	if err := p.w.Run(ctx, tx); err != nil {
		p.synced = false
		return backend.Result{}, fmt.Errorf("nftables transaction (%d operations): %w", tx.NumOperations(), err)
	}
	total := commit()
	return backend.Result{Rules: tx.NumOperations(), Total: total}, nil
}

var baseChains = map[string]bool{
	"filter-input": true, "filter-forward": true, "filter-output": true,
	"nat-prerouting": true, "nat-output": true, "nat-postrouting": true,
	chServices: true, chMasquerading: true, chReject: true,
	chEndpointsCheck: true, chNodePortsCheck: true, chClusterIPs: true,
}

func (p *Proxier) addElem(tx *nftbatch.Transaction, k elemKey, v string) {
	tx.AddElement(k.set, k.key, v, v != "")
}

func (p *Proxier) delElem(tx *nftbatch.Transaction, k elemKey, v string) {
	tx.DeleteElement(k.set, k.key, v != "")
}

// addBase (re)creates the table's fixed objects, emptying the shared maps
// and sets so that the full sync's elements replace them.
func (p *Proxier) addBase(tx *nftbatch.Transaction, nodeIPs []netip.Addr) {
	tx.Add(&knftables.Table{Comment: ptr.To("rules for trireme-proxy")})
	base := func(name string, t knftables.BaseChainType, h knftables.BaseChainHook, prio knftables.BaseChainPriority) {
		tx.Add(&knftables.Chain{Name: name, Type: ptr.To(t), Hook: ptr.To(h), Priority: ptr.To(prio)})
		tx.Flush(&knftables.Chain{Name: name})
	}
	base("filter-input", knftables.FilterType, knftables.InputHook, knftables.FilterPriority+"-10")
	base("filter-forward", knftables.FilterType, knftables.ForwardHook, knftables.FilterPriority+"-10")
	base("filter-output", knftables.FilterType, knftables.OutputHook, knftables.FilterPriority+"-10")
	base("nat-prerouting", knftables.NATType, knftables.PreroutingHook, knftables.DNATPriority)
	base("nat-output", knftables.NATType, knftables.OutputHook, knftables.DNATPriority)
	base("nat-postrouting", knftables.NATType, knftables.PostroutingHook, knftables.SNATPriority)
	for _, c := range []string{chServices, chMasquerading, chReject, chEndpointsCheck, chNodePortsCheck, chClusterIPs} {
		tx.Add(&knftables.Chain{Name: c})
		tx.Flush(&knftables.Chain{Name: c})
	}
	ap := p.addrType
	for _, m := range []struct{ name, typ string }{
		{mapServiceIPs, ap + " . inet_proto . inet_service : verdict"},
		{mapNodePorts, "inet_proto . inet_service : verdict"},
		{mapNoEndpoints, ap + " . inet_proto . inet_service : verdict"},
		{mapNoEpNodePorts, "inet_proto . inet_service : verdict"},
	} {
		tx.Add(&knftables.Map{Name: m.name, Type: m.typ})
		tx.Flush(&knftables.Map{Name: m.name})
	}

	tx.Add(&knftables.Set{Name: setHairpin, Type: ap + " . " + ap})
	tx.Flush(&knftables.Set{Name: setHairpin})
	tx.Add(&knftables.Set{Name: setNodePortIPs, Type: ap})
	tx.Flush(&knftables.Set{Name: setNodePortIPs})
	tx.Add(&knftables.Set{Name: setClusterIPs, Type: ap})
	tx.Flush(&knftables.Set{Name: setClusterIPs})
	for _, ip := range nodeIPs {
		tx.Add(&knftables.Element{Set: setNodePortIPs, Key: []string{ip.String()}})
	}

	rule := func(chain, r string) { tx.Add(&knftables.Rule{Chain: chain, Rule: r}) }
	rule("filter-input", "ct state new jump "+chNodePortsCheck)
	for _, c := range []string{"filter-input", "filter-forward", "filter-output"} {
		rule(c, "ct state new jump "+chEndpointsCheck)
	}
	// After DNAT (the filter hooks come after nat's), a new connection
	// still addressed to a ClusterIP is to a port the Service does not have.
	for _, c := range []string{"filter-forward", "filter-output"} {
		rule(c, "ct state new jump "+chClusterIPs)
	}
	rule("nat-prerouting", "jump "+chServices)
	rule("nat-output", "jump "+chServices)
	rule("nat-postrouting", "jump "+chMasquerading)
	mark := fmt.Sprintf("0x%x", uint32(1)<<p.cfg.MasqueradeBit)
	// Hairpin: a pod reaching itself through a Service must see the reply
	// come from the Service, so the source is rewritten to the node's.
	rule(chMasquerading, fmt.Sprintf("ct status dnat %s saddr . %s daddr @%s masquerade fully-random", p.ip, p.ip, setHairpin))
	rule(chMasquerading, "meta mark & "+mark+" == 0 return")
	rule(chMasquerading, "meta mark set meta mark ^ "+mark)
	rule(chMasquerading, "masquerade fully-random")
	rule(chReject, "reject")
	rule(chServices, fmt.Sprintf("%s daddr . meta l4proto . th dport vmap @%s", p.ip, mapServiceIPs))
	rule(chEndpointsCheck, fmt.Sprintf("%s daddr . meta l4proto . th dport vmap @%s", p.ip, mapNoEndpoints))
	rule(chClusterIPs, fmt.Sprintf("%s daddr @%s reject", p.ip, setClusterIPs))
	if nodeIPs == nil {
		loop := "127.0.0.0/8"
		if p.cfg.Family == model.IPv6 {
			loop = "::1"
		}
		rule(chServices, fmt.Sprintf("fib daddr type local %s daddr != %s meta l4proto . th dport vmap @%s", p.ip, loop, mapNodePorts))
		rule(chNodePortsCheck, fmt.Sprintf("fib daddr type local meta l4proto . th dport vmap @%s", mapNoEpNodePorts))
	} else {
		rule(chServices, fmt.Sprintf("%s daddr @%s meta l4proto . th dport vmap @%s", p.ip, setNodePortIPs, mapNodePorts))
		rule(chNodePortsCheck, fmt.Sprintf("%s daddr @%s meta l4proto . th dport vmap @%s", p.ip, setNodePortIPs, mapNoEpNodePorts))
	}
}

// changedPrivate returns a's private elements that b lacks or holds with
// another value.
func changedPrivate(a, b *piece) []endpointElem {
	if b == nil || len(b.private) == 0 {
		return a.private
	}
	in := make(map[endpointKey]netip.AddrPort, len(b.private))
	for _, e := range b.private {
		in[endpointKey{e.set, e.key}] = e.ep
	}
	var out []endpointElem
	for _, e := range a.private {
		if v, ok := in[endpointKey{e.set, e.key}]; !ok || v != e.ep {
			out = append(out, e)
		}
	}
	return out
}

// markMasq is the statement marking a packet for masquerading. It is
// written inline rather than as a jump to a shared chain: the kernel
// re-validates every chain reachable from the table's base chains
// whenever a transaction adds a rule with a jump or goto (about 45 ms at
// 10,000 Services), so rules that change with endpoints avoid them.
func (p *Proxier) markMasq() string {
	return fmt.Sprintf("meta mark set meta mark | 0x%x", uint32(1)<<p.cfg.MasqueradeBit)
}

// endpointsMap is the endpoints map a port's addresses go to.
// One protocol's ports go to maps of their own, typed by that protocol.
func endpointsMap(n model.ServicePortName) string {
	h := fnv.New32a()
	h.Write([]byte(n.String()))
	return fmt.Sprintf("%s-%s-%02x", mapEndpoints, protoName(n.Protocol), h.Sum32()%endpointBuckets)
}

func chainName(kind string, sp *model.ServicePort) string {
	n := sp.Name
	return fmt.Sprintf("%s-%s-%s/%s/%s/%s", kind, n.Hash()[:8], n.Namespace, n.Name, strings.ToLower(string(n.Protocol)), n.Port)
}

func protoName(p v1.Protocol) string { return strings.ToLower(string(p)) }

// render computes one ServicePort's piece.
func (p *Proxier) render(sp *model.ServicePort) *piece {
	pc := &piece{chains: map[string][]string{}, sets: map[string]int32{}, ranges: map[string]keyRange{}}
	proto := protoName(sp.Protocol)
	svcChain := chainName("service", sp)
	extChain := chainName("external", sp)
	internal, external := sp.InternalEndpoints(), sp.ExternalEndpoints()
	all := sp.AllEndpoints()
	elem := func(set string, key []string, value string) {
		pc.elems = append(pc.elems, element{set: set, key: strings.Join(key, " . "), value: value})
	}
	port := strconv.Itoa(int(sp.Port))

	// ClusterIP.
	elem(setClusterIPs, []string{sp.ClusterIP.String()}, "")
	cipKey := []string{sp.ClusterIP.String(), proto, port}
	switch {
	case len(internal) > 0:
		elem(mapServiceIPs, cipKey, "goto "+svcChain)
		var rules []string
		if p.cfg.MasqueradeAll {
			rules = append(rules, fmt.Sprintf("%s daddr %s %s dport %d %s", p.ip, sp.ClusterIP, proto, sp.Port, p.markMasq()))
		} else if p.cfg.ClusterCIDR.IsValid() {
			rules = append(rules, fmt.Sprintf("%s daddr %s %s dport %d %s saddr != %s %s", p.ip, sp.ClusterIP, proto, sp.Port, p.ip, p.cfg.ClusterCIDR, p.markMasq()))
		}
		pc.chains[svcChain] = append(rules, p.dispatch(pc, sp, svcChain, internal)...)
	case sp.InternalLocal && len(all) > 0:
		// Endpoints exist, just not here: drop as upstream, since a
		// reject would tell the client the Service has none.
		elem(mapNoEndpoints, cipKey, "drop")
	default:
		elem(mapNoEndpoints, cipKey, "goto "+chReject)
	}

	if !sp.HasExternal() {
		p.hairpin(pc, internal)
		return pc
	}
	var extVerdict, noEpVerdict string
	switch {
	case len(external) > 0:
		extVerdict = "goto " + extChain
		var rules []string
		if !sp.ExternalLocal {
			rules = append(rules, p.markMasq())
			if sp.InternalLocal || !slices.Equal(internal, external) {
				rules = append(rules, p.dispatch(pc, sp, extChain, external)...)
			} else {
				rules = append(rules, "goto "+svcChain)
			}
		} else {
			// Traffic from pods and from the node itself keeps going to
			// every endpoint, as upstream: only traffic from outside the
			// node keeps its source and is limited to local endpoints.
			if len(internal) > 0 {
				if p.cfg.ClusterCIDR.IsValid() {
					rules = append(rules, fmt.Sprintf("%s saddr %s goto %s", p.ip, p.cfg.ClusterCIDR, svcChain))
				}
				rules = append(rules, "fib saddr type local "+p.markMasq(), "fib saddr type local goto "+svcChain)
			}
			rules = append(rules, p.dispatch(pc, sp, extChain, external)...)
		}
		pc.chains[extChain] = rules
	case sp.ExternalLocal && len(all) > 0:
		noEpVerdict = "drop"
	default:
		noEpVerdict = "goto " + chReject
	}
	// Load-balancer IPs with source ranges go through a firewall chain
	// that lets only those sources on, as upstream's firewall check.
	lbVerdict := extVerdict
	if extVerdict != "" && len(sp.LoadBalancerSourceRanges) > 0 && len(sp.LoadBalancerIPs) > 0 {
		fwChain := chainName("firewall", sp)
		var rules []string
		for _, r := range sp.LoadBalancerSourceRanges {
			rules = append(rules, fmt.Sprintf("%s saddr %s %s", p.ip, r, extVerdict))
		}
		pc.chains[fwChain] = append(rules, "drop")
		lbVerdict = "goto " + fwChain
	}
	for i, ip := range append(slices.Clone(sp.ExternalIPs), sp.LoadBalancerIPs...) {
		k := []string{ip.String(), proto, port}
		switch {
		case extVerdict == "":
			elem(mapNoEndpoints, k, noEpVerdict)
		case i >= len(sp.ExternalIPs):
			elem(mapServiceIPs, k, lbVerdict)
		default:
			elem(mapServiceIPs, k, extVerdict)
		}
	}
	if sp.NodePort != 0 {
		k := []string{proto, strconv.Itoa(int(sp.NodePort))}
		if extVerdict != "" {
			elem(mapNodePorts, k, extVerdict)
		} else {
			elem(mapNoEpNodePorts, k, noEpVerdict)
		}
	}
	p.hairpin(pc, append(slices.Clone(internal), external...))
	return pc
}

func (p *Proxier) hairpin(pc *piece, eps []model.Endpoint) {
	for _, e := range eps {
		pc.hairpin = append(pc.hairpin, e.IP)
	}
	slices.SortFunc(pc.hairpin, netip.Addr.Compare)
	pc.hairpin = slices.Compact(pc.hairpin)
}

func dnatTarget(e model.Endpoint) string {
	if e.IP.Is6() {
		return fmt.Sprintf("[%s]:%d", e.IP, e.Port)
	}
	return fmt.Sprintf("%s:%d", e.IP, e.Port)
}

// dispatch renders the rules that pick one of eps at random. Without
// session affinity that is one rule, "dnat to numgen random mod N offset
// B map @service-endpoints-PROTO-XX", over a run of N keys of an endpoints map
// holding the addresses. A changed endpoint is then a changed map element,
// not a changed rule: the kernel re-validates the whole table (every
// chain reachable from a base chain, some 45 ms at 10,000 Services) when
// a transaction adds a rule with a NAT statement or a jump, but not for
// data elements. The run is kept while the count of endpoints is.
//
// The Services share endpointBuckets maps, by a hash of their name. Not
// one map: the kernel checks each element added to a map against every
// rule bound to it, and walks the map for every rule that binds to it, so
// one map for 10,000 Services costs seconds. Not one per Service: the
// kernel finds sets by name in a list, for every set, rule and element
// message. A few hundred maps keep both small.
//
// With affinity, each endpoint gets a chain that records the client in a
// timeout set.
func (p *Proxier) dispatch(pc *piece, sp *model.ServicePort, chain string, eps []model.Endpoint) []string {
	proto := protoName(sp.Protocol)
	if sp.AffinityTimeout == 0 {
		n := uint32(len(eps))
		bucket := endpointsMap(sp.Name)
		r, ok := keyRange{}, false
		if old := p.old[sp.Name]; old != nil {
			r, ok = old.ranges[chain]
		}
		if !ok || r.n != n || r.bucket != bucket {
			r = keyRange{bucket: bucket, base: p.nextKey[bucket], n: n}
			p.nextKey[bucket] += n
		}
		pc.ranges[chain] = r
		for i, e := range eps {
			pc.private = append(pc.private, endpointElem{set: bucket, key: r.base + uint32(i), ep: netip.AddrPortFrom(e.IP, uint16(e.Port))})
		}
		return []string{fmt.Sprintf("meta l4proto %s dnat %s to numgen random mod %d offset %d map @%s", proto, p.ip, n, r.base, bucket)}
	}
	var rules, vmap []string
	for i, e := range eps {
		h := sp.Name.EndpointHash(e)[:8]
		// nft's syntax has no colons in names: IPv6 addresses are written
		// with dots (the hash keeps names unique).
		epChain := fmt.Sprintf("endpoint-%s-%s/%s/%s/%s__%s/%d", h, sp.Name.Namespace, sp.Name.Name, proto, sp.Name.Port,
			strings.ReplaceAll(e.IP.String(), ":", "."), e.Port)
		set := "affinity-" + h
		pc.sets[set] = sp.AffinityTimeout
		pc.chains[epChain] = []string{
			fmt.Sprintf("update @%s { %s saddr }", set, p.ip),
			fmt.Sprintf("meta l4proto %s dnat to %s", proto, dnatTarget(e)),
		}
		rules = append(rules, fmt.Sprintf("%s saddr @%s goto %s", p.ip, set, epChain))
		vmap = append(vmap, fmt.Sprintf("%d : goto %s", i, epChain))
	}
	return append(rules, fmt.Sprintf("numgen random mod %d vmap { %s }", len(eps), strings.Join(vmap, " , ")))
}

// Cleanup implements backend.Interface: deleting the table removes every
// chain, map and set in one step.
func (p *Proxier) Cleanup(ctx context.Context) error {
	tx := p.newTransaction()
	// "destroy" would not fail on a missing table, but nft before 1.0.8
	// (Debian 12's 1.0.6) lacks it.
	tx.Delete(&knftables.Table{})
	if err := p.w.Run(ctx, tx); err != nil && !nftbatch.IsNotFound(err) {
		return fmt.Errorf("delete nftables table %s: %w", p.cfg.Table, err)
	}
	p.reset()
	return nil
}

func sortedKeys(m map[elemKey]bool) []elemKey {
	out := make([]elemKey, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b elemKey) int {
		if c := strings.Compare(a.set, b.set); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	return out
}
