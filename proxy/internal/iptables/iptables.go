package iptables

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"trireme.dev/proxy/internal/backend"
	"trireme.dev/proxy/internal/model"
)

// Prefix starts the name of every chain the back end owns.
const Prefix = "TRIREME-"

// The fixed chains.
const (
	chServices     = Prefix + "SERVICES"
	chNodePorts    = Prefix + "NODEPORTS"
	chExtServices  = Prefix + "EXTERNAL-SERVICES"
	chPostrouting  = Prefix + "POSTROUTING"
	chMarkMasq     = Prefix + "MARK-MASQ"
	tableNAT       = "nat"
	tableFilter    = "filter"
	jumpComment    = "trireme-proxy"
	probabilityFmt = "%0.10f"
)

// jumps are the rules put in built-in chains, each leading into ours.
var jumps = []struct {
	table, chain string
	rule         []string
}{
	{tableFilter, "INPUT", []string{"-m", "conntrack", "--ctstate", "NEW", "-j", chExtServices}},
	{tableFilter, "INPUT", []string{"-m", "conntrack", "--ctstate", "NEW", "-j", chServices}},
	{tableFilter, "FORWARD", []string{"-m", "conntrack", "--ctstate", "NEW", "-j", chServices}},
	{tableFilter, "OUTPUT", []string{"-m", "conntrack", "--ctstate", "NEW", "-j", chServices}},
	{tableNAT, "PREROUTING", []string{"-j", chServices}},
	{tableNAT, "OUTPUT", []string{"-j", chServices}},
	{tableNAT, "POSTROUTING", []string{"-j", chPostrouting}},
}

// Config is what the rules depend on besides the Services.
type Config struct {
	Family        model.Family
	ClusterCIDR   netip.Prefix
	MasqueradeAll bool
	MasqueradeBit int
}

// piece is what one ServicePort contributes: its own nat chains, and its
// lines in the shared dispatch chains.
type piece struct {
	chains                       map[string][]string
	services, nodePorts          []string // nat
	filterServices, filterExtern []string // filter
}

// Proxier is the iptables back end. It is not safe for concurrent use.
type Proxier struct {
	cfg  Config
	exec Executor
	mark string
	host string // "/32" or "/128"

	pieces  map[model.ServicePortName]*piece
	written map[string]string // fixed chain -> content last written
	synced  bool
}

// New returns a Proxier running exec.
func New(cfg Config, exec Executor) *Proxier {
	p := &Proxier{cfg: cfg, exec: exec, mark: fmt.Sprintf("0x%x", uint32(1)<<cfg.MasqueradeBit), host: "/32"}
	if cfg.Family == model.IPv6 {
		p.host = "/128"
	}
	p.reset()
	return p
}

func (p *Proxier) reset() {
	p.pieces = map[model.ServicePortName]*piece{}
	p.written = map[string]string{}
	p.synced = false
}

// Sync implements backend.Interface.
func (p *Proxier) Sync(ctx context.Context, req backend.Request) (backend.Result, error) {
	full := req.Full || !p.synced
	var existing map[string][]string
	if full {
		if err := p.ensureJumps(ctx); err != nil {
			p.synced = false
			return backend.Result{}, err
		}
		var err error
		if existing, err = p.ownChains(ctx); err != nil {
			p.synced = false
			return backend.Result{}, err
		}
	}
	data, lines, commit := p.Plan(req, full, existing)
	if err := p.exec.Restore(ctx, data); err != nil {
		p.synced = false
		return backend.Result{}, fmt.Errorf("iptables-restore (%d lines): %w", lines, err)
	}
	return backend.Result{Rules: lines, Total: commit()}, nil
}

// ownChains lists the TRIREME- chains in the nat and filter tables.
func (p *Proxier) ownChains(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	for _, t := range []string{tableNAT, tableFilter} {
		data, err := p.exec.Save(ctx, t)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), ":"+Prefix); ok {
				name, _, _ = strings.Cut(name, " ")
				out[t] = append(out[t], Prefix+name)
			}
		}
	}
	return out, nil
}

func (p *Proxier) ensureJumps(ctx context.Context) error {
	// The chains must exist before a rule can jump to them.
	var b bytes.Buffer
	for _, t := range []string{tableFilter, tableNAT} {
		fmt.Fprintf(&b, "*%s\n", t)
		seen := map[string]bool{}
		for _, j := range jumps {
			if c := j.rule[len(j.rule)-1]; j.table == t && !seen[c] {
				seen[c] = true
				fmt.Fprintf(&b, ":%s - [0:0]\n", c)
			}
		}
		b.WriteString("COMMIT\n")
	}
	if err := p.exec.Restore(ctx, b.Bytes()); err != nil {
		return fmt.Errorf("create chains: %w", err)
	}
	for _, j := range jumps {
		rule := append([]string{j.chain, "-m", "comment", "--comment", jumpComment}, j.rule...)
		if err := p.exec.Run(ctx, append([]string{"-t", j.table, "-C"}, rule...)...); err == nil {
			continue
		}
		if err := p.exec.Run(ctx, append([]string{"-t", j.table, "-I"}, rule...)...); err != nil {
			return fmt.Errorf("add jump from %s %s: %w", j.table, j.chain, err)
		}
	}
	return nil
}

// maxChainsPerCommit bounds the Service chains of one nat section of an
// iptables-restore input.
const maxChainsPerCommit = 200

func isFixed(c string) bool {
	switch c {
	case chServices, chNodePorts, chExtServices, chPostrouting, chMarkMasq:
		return true
	}
	return false
}

func (p *Proxier) render(sp *model.ServicePort) *piece {
	pc := &piece{chains: map[string][]string{}}
	h := sp.Name.Hash()
	svcChain, extChain := Prefix+"SVC-"+h, Prefix+"EXT-"+h
	proto := strings.ToLower(string(sp.Protocol))
	comment := fmt.Sprintf(`-m comment --comment "%s"`, sp.Name)
	match := func(ip netip.Addr, port int32) string {
		return fmt.Sprintf("-d %s%s -p %s -m %s --dport %d", ip, p.host, proto, proto, port)
	}
	internal, external, all := sp.InternalEndpoints(), sp.ExternalEndpoints(), sp.AllEndpoints()

	switch {
	case len(internal) > 0:
		pc.services = append(pc.services, fmt.Sprintf("-A %s %s %s -j %s", chServices, comment, match(sp.ClusterIP, sp.Port), svcChain))
		var rules []string
		if p.cfg.MasqueradeAll {
			rules = append(rules, fmt.Sprintf("-A %s %s -j MARK --or-mark %s", svcChain, match(sp.ClusterIP, sp.Port), p.mark))
		} else if p.cfg.ClusterCIDR.IsValid() {
			rules = append(rules, fmt.Sprintf("-A %s ! -s %s %s -j MARK --or-mark %s", svcChain, p.cfg.ClusterCIDR, match(sp.ClusterIP, sp.Port), p.mark))
		}
		pc.chains[svcChain] = append(rules, p.dispatch(sp, svcChain, internal)...)
	case sp.InternalLocal && len(all) > 0:
		pc.filterServices = append(pc.filterServices, fmt.Sprintf("-A %s %s %s -j DROP", chServices, comment, match(sp.ClusterIP, sp.Port)))
	default:
		pc.filterServices = append(pc.filterServices, fmt.Sprintf("-A %s %s %s -j REJECT", chServices, comment, match(sp.ClusterIP, sp.Port)))
	}
	if !sp.HasExternal() {
		return pc
	}
	ips := append(slices.Clone(sp.ExternalIPs), sp.LoadBalancerIPs...)
	if len(external) > 0 {
		var rules []string
		if !sp.ExternalLocal {
			rules = append(rules, fmt.Sprintf("-A %s -j MARK --or-mark %s", extChain, p.mark))
			if sp.InternalLocal {
				rules = append(rules, p.dispatch(sp, extChain, external)...)
			} else {
				rules = append(rules, fmt.Sprintf("-A %s -j %s", extChain, svcChain))
			}
		} else {
			if len(internal) > 0 {
				if p.cfg.ClusterCIDR.IsValid() {
					rules = append(rules, fmt.Sprintf("-A %s -s %s -j %s", extChain, p.cfg.ClusterCIDR, svcChain))
				}
				rules = append(rules,
					fmt.Sprintf("-A %s -m addrtype --src-type LOCAL -j MARK --or-mark %s", extChain, p.mark),
					fmt.Sprintf("-A %s -m addrtype --src-type LOCAL -j %s", extChain, svcChain))
			}
			rules = append(rules, p.dispatch(sp, extChain, external)...)
		}
		pc.chains[extChain] = rules
		// loadBalancerSourceRanges: once DNAT chose an endpoint, the
		// filter table drops new connections to a load-balancer IP from
		// other sources (nat cannot drop). Conntrack still knows the
		// address and port the client asked for.
		if len(sp.LoadBalancerSourceRanges) > 0 {
			for _, ip := range sp.LoadBalancerIPs {
				orig := fmt.Sprintf("-m conntrack --ctorigdst %s%s --ctorigdstport %d -p %s", ip, p.host, sp.Port, proto)
				for _, r := range sp.LoadBalancerSourceRanges {
					pc.filterServices = append(pc.filterServices, fmt.Sprintf("-A %s %s %s -s %s -j RETURN", chServices, comment, orig, r))
				}
				pc.filterServices = append(pc.filterServices, fmt.Sprintf("-A %s %s %s -j DROP", chServices, comment, orig))
			}
		}
		for _, ip := range ips {
			pc.services = append(pc.services, fmt.Sprintf("-A %s %s %s -j %s", chServices, comment, match(ip, sp.Port), extChain))
		}
		if sp.NodePort != 0 {
			pc.nodePorts = append(pc.nodePorts, fmt.Sprintf("-A %s %s -p %s -m %s --dport %d -j %s", chNodePorts, comment, proto, proto, sp.NodePort, extChain))
		}
		return pc
	}
	verdict := "REJECT"
	if sp.ExternalLocal && len(all) > 0 {
		verdict = "DROP"
	}
	for _, ip := range ips {
		pc.filterExtern = append(pc.filterExtern, fmt.Sprintf("-A %s %s %s -j %s", chExtServices, comment, match(ip, sp.Port), verdict))
	}
	if sp.NodePort != 0 {
		pc.filterExtern = append(pc.filterExtern, fmt.Sprintf("-A %s %s -m addrtype --dst-type LOCAL -p %s -m %s --dport %d -j %s", chExtServices, comment, proto, proto, sp.NodePort, verdict))
	}
	return pc
}

// dispatch renders the rules of chain that pick one of eps at random:
// the i-th of the k remaining rules matches with probability 1/k.
//
// Each endpoint's DNAT sits in the Service's chain itself, not in a chain
// of its own as upstream's KUBE-SEP chains: Debian's iptables-restore (the
// nft-backed one) looks chains up by walking them, for every rule, so its
// time grows with rules times chains; 10,000 Services with 10 endpoints
// took minutes with a chain per endpoint. The price is hairpin
// masquerading: a packet from one of the Service's own endpoints is
// marked whichever endpoint it then goes to, not only when it comes back
// to itself.
//
// Endpoints whose slice names another node get no such rule: their pods
// reach the Service through their own node's rules, and a rule each
// (100,000 of 220,000 rules at 10,000 Services) would cost iptables-restore
// time and memory for nothing. An endpoint whose slice names no node (one
// written by hand) may be a pod here, and keeps it, as upstream writes it
// for every endpoint.
func (p *Proxier) dispatch(sp *model.ServicePort, chain string, eps []model.Endpoint) []string {
	proto := strings.ToLower(string(sp.Protocol))
	rules := make([]string, 0, 2*len(eps)+1)
	for _, e := range eps {
		if !e.Remote {
			rules = append(rules, fmt.Sprintf("-A %s -s %s%s -j MARK --or-mark %s", chain, e.IP, p.host, p.mark))
		}
	}
	recent := func(e model.Endpoint) string {
		return fmt.Sprintf("%s%s-%s", Prefix, "AFF", sp.Name.EndpointHash(e))
	}
	if sp.AffinityTimeout > 0 {
		for _, e := range eps {
			rules = append(rules, fmt.Sprintf("-A %s -p %s -m %s -m recent --name %s --update --seconds %d --reap -j DNAT --to-destination %s",
				chain, proto, proto, recent(e), sp.AffinityTimeout, netip.AddrPortFrom(e.IP, uint16(e.Port))))
		}
	}
	for i, e := range eps {
		stat := ""
		if k := len(eps) - i; k > 1 {
			stat = fmt.Sprintf("-m statistic --mode random --probability "+probabilityFmt+" ", 1/float64(k))
		}
		set := ""
		if sp.AffinityTimeout > 0 {
			set = fmt.Sprintf("-m recent --name %s --set ", recent(e))
		}
		rules = append(rules, fmt.Sprintf("-A %s -p %s -m %s %s%s-j DNAT --to-destination %s", chain, proto, proto, stat, set, netip.AddrPortFrom(e.IP, uint16(e.Port))))
	}
	return rules
}

// Cleanup implements backend.Interface: the jumps out of built-in chains
// go first, then every TRIREME- chain.
func (p *Proxier) Cleanup(ctx context.Context) error {
	var errs []error
	for _, j := range jumps {
		rule := append([]string{j.chain, "-m", "comment", "--comment", jumpComment}, j.rule...)
		// A rule added twice (two processes racing) is deleted twice.
		for range 10 {
			if p.exec.Run(ctx, append([]string{"-t", j.table, "-C"}, rule...)...) != nil {
				break
			}
			if err := p.exec.Run(ctx, append([]string{"-t", j.table, "-D"}, rule...)...); err != nil {
				errs = append(errs, err)
				break
			}
		}
	}
	own, err := p.ownChains(ctx)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	var b bytes.Buffer
	for _, t := range []string{tableFilter, tableNAT} {
		fmt.Fprintf(&b, "*%s\n", t)
		for _, c := range own[t] {
			fmt.Fprintf(&b, ":%s - [0:0]\n", c)
		}
		for _, c := range own[t] {
			fmt.Fprintf(&b, "-X %s\n", c)
		}
		b.WriteString("COMMIT\n")
	}
	if err := p.exec.Restore(ctx, b.Bytes()); err != nil {
		errs = append(errs, fmt.Errorf("delete chains: %w", err))
	}
	p.reset()
	return errors.Join(errs...)
}
