package nftbatch

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
	"sigs.k8s.io/knftables"
)

// The netlink writer compiles the rules its users render (the proxy's and
// trireme-netpol's), which use a small part of the nft language, into
// kernel expressions. compileRule fails on anything outside that part, and
// each user has a test that writes its golden rules both ways and
// compares what the kernel lists.

// anonMap is an anonymous constant verdict map a rule uses, created in
// the same batch before the rule.
type anonMap struct {
	id    uint32
	elems []anonElem
}

type anonElem struct {
	key     uint32
	verdict string
}

const (
	regFirst     = 1 // NFT_REG_1: 16 bytes, the same storage as NFT_REG32_00..03
	reg32Base    = unix.NFT_REG32_00
	ctStatusDNAT = 0x20 // IPS_DST_NAT
	rtnLocal     = 2    // RTN_LOCAL
)

// ctStates are the conntrack states as ct state bits.
var ctStates = map[string]uint32{"invalid": 1, "established": 2, "related": 4, "new": 8, "untracked": 64}

type ruleCompiler struct {
	// ip6 says the table is of the ip6 family, inet that it is of the
	// inet family, where an address match first checks the packet's
	// family (as nft does) and ip and ip6 are both allowed.
	ip6, inet bool
	// nfproto is the family the rule has checked so far, if any.
	nfproto byte
	toks    []string
	i       int
	exprs   []expr.Any
	anon    *anonMap
	newID   func() uint32
}

func (c *ruleCompiler) peek(n int) string {
	if c.i+n < len(c.toks) {
		return c.toks[c.i+n]
	}
	return ""
}

func (c *ruleCompiler) next() string {
	t := c.peek(0)
	c.i++
	return t
}

func (c *ruleCompiler) add(e ...expr.Any) { c.exprs = append(c.exprs, e...) }

func (c *ruleCompiler) errorf(format string, args ...any) error {
	return fmt.Errorf("rule %q: %s", strings.Join(c.toks, " "), fmt.Sprintf(format, args...))
}

// compileRule turns one rule into expressions, and the anonymous map it
// needs (or nil).
func compileRule(family knftables.Family, rule string, newID func() uint32) ([]expr.Any, *anonMap, error) {
	c := &ruleCompiler{ip6: family == knftables.IPv6Family, inet: family == knftables.InetFamily, toks: strings.Fields(rule), newID: newID}
	for c.i < len(c.toks) {
		if err := c.step(); err != nil {
			return nil, nil, err
		}
	}
	return c.exprs, c.anon, nil
}

func hostU32(v uint32) []byte {
	b := make([]byte, 4)
	binary.NativeEndian.PutUint32(b, v)
	return b
}

func be16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }

func protoNum(s string) (byte, bool) {
	switch s {
	case "tcp":
		return unix.IPPROTO_TCP, true
	case "udp":
		return unix.IPPROTO_UDP, true
	case "sctp":
		return unix.IPPROTO_SCTP, true
	}
	return 0, false
}

// selector is something a rule loads into a register.
type selector struct {
	load func(reg uint32) []expr.Any
	len  uint32
	// nfproto is the family the packet must be of first (in an inet
	// table), or 0.
	nfproto byte
}

func (c *ruleCompiler) addrSelector(ip6 bool, dir string) (selector, error) {
	var off uint32
	l := uint32(4)
	switch {
	case !ip6 && dir == "saddr":
		off = 12
	case !ip6 && dir == "daddr":
		off = 16
	case ip6 && dir == "saddr":
		off, l = 8, 16
	case ip6 && dir == "daddr":
		off, l = 24, 16
	default:
		return selector{}, c.errorf("unknown address %q", dir)
	}
	var nfproto byte
	switch {
	case c.inet && ip6:
		nfproto = unix.NFPROTO_IPV6
	case c.inet:
		nfproto = unix.NFPROTO_IPV4
	}
	return selector{len: l, nfproto: nfproto, load: func(reg uint32) []expr.Any {
		return []expr.Any{&expr.Payload{DestRegister: reg, Base: expr.PayloadBaseNetworkHeader, Offset: off, Len: l}}
	}}, nil
}

// depend checks, once per rule, that the packet is of the family sel
// reads (nft's dependency for ip and ip6 matches in an inet table).
func (c *ruleCompiler) depend(sel selector) error {
	switch {
	case sel.nfproto == 0 || sel.nfproto == c.nfproto:
		return nil
	case c.nfproto != 0:
		return c.errorf("matches both IPv4 and IPv6")
	}
	c.nfproto = sel.nfproto
	c.add(&expr.Meta{Key: expr.MetaKeyNFPROTO, Register: regFirst},
		&expr.Cmp{Op: expr.CmpOpEq, Register: regFirst, Data: []byte{sel.nfproto}})
	return nil
}

// parseSelector reads "ip daddr", "ip6 saddr", "meta l4proto" or "th dport".
func (c *ruleCompiler) parseSelector() (selector, error) {
	a, b := c.next(), c.next()
	switch {
	case (a == "ip" && (c.inet || !c.ip6)) || (a == "ip6" && (c.inet || c.ip6)):
		return c.addrSelector(a == "ip6", b)
	case a == "meta" && b == "l4proto":
		return selector{len: 1, load: func(reg uint32) []expr.Any {
			return []expr.Any{&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: reg}}
		}}, nil
	case a == "th" && b == "dport":
		return selector{len: 2, load: func(reg uint32) []expr.Any {
			return []expr.Any{&expr.Payload{DestRegister: reg, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2}}
		}}, nil
	}
	return selector{}, c.errorf("unknown selector %q %q", a, b)
}

func (c *ruleCompiler) lookup(set string, verdictMap bool) {
	l := &expr.Lookup{SourceRegister: regFirst, SetName: set}
	if verdictMap {
		l.IsDestRegSet, l.DestRegister = true, 0
	}
	c.add(l)
}

// step compiles one match or statement.
func (c *ruleCompiler) step() error {
	t := c.peek(0)
	switch {
	case t == "ct" && c.peek(1) == "state":
		var bits uint32
		for _, st := range strings.Split(c.peek(2), ",") {
			b, ok := ctStates[st]
			if !ok {
				return c.errorf("unknown ct state %q", st)
			}
			bits |= b
		}
		c.ctFlag(expr.CtKeySTATE, bits)
	case t == "ct" && c.peek(1) == "status" && c.peek(2) == "dnat":
		c.ctFlag(expr.CtKeySTATUS, ctStatusDNAT)
	case t == "counter" && c.peek(1) == "name":
		n, err := strconv.Unquote(c.peek(2))
		if err != nil {
			return c.errorf("bad counter name %s", c.peek(2))
		}
		c.i += 3
		c.add(&expr.Objref{Type: nftObjectCounter, Name: n})
	case t == "meta" && c.peek(1) == "mark" && c.peek(2) == "&":
		return c.markMatch()
	case t == "meta" && c.peek(1) == "mark" && c.peek(2) == "set":
		return c.markSet()
	case t == "meta" && c.peek(1) == "l4proto" && c.peek(3) != "." && c.peek(2) != ".":
		return c.l4protoMatch()
	case t == "fib" && c.peek(2) == "type" && c.peek(3) == "local":
		return c.fibLocal()
	case t == "numgen" && c.peek(1) == "random" && c.peek(2) == "mod":
		return c.numgen()
	case (t == "ip" || t == "ip6" || t == "meta") && (c.peek(2) == "." || c.peek(2) == "vmap" || strings.HasPrefix(c.peek(2), "@")):
		return c.concatLookup()
	case t == "ip" || t == "ip6":
		sel, err := c.parseSelector()
		if err != nil {
			return err
		}
		op := expr.CmpOpEq
		if c.peek(0) == "!=" {
			op = expr.CmpOpNeq
			c.i++
		}
		return c.addrMatch(sel, op, c.next())
	case (t == "tcp" || t == "udp" || t == "sctp") && c.peek(1) == "dport":
		return c.portMatch()
	case t == "jump" || t == "goto":
		kind := expr.VerdictJump
		if t == "goto" {
			kind = expr.VerdictGoto
		}
		c.add(&expr.Verdict{Kind: kind, Chain: c.peek(1)})
		c.i += 2
	case t == "return" || t == "drop" || t == "accept":
		c.add(&expr.Verdict{Kind: map[string]expr.VerdictKind{"return": expr.VerdictReturn, "drop": expr.VerdictDrop, "accept": expr.VerdictAccept}[t]})
		c.i++
	case t == "reject":
		code := uint8(3) // ICMP_PORT_UNREACH
		if c.ip6 {
			code = 4 // ICMPV6_PORT_UNREACH
		}
		c.add(&expr.Reject{Type: unix.NFT_REJECT_ICMP_UNREACH, Code: code})
		c.i++
	case t == "masquerade":
		m := &expr.Masq{}
		c.i++
		if c.peek(0) == "fully-random" {
			m.FullyRandom = true
			c.i++
		}
		c.add(m)
	case t == "dnat" && (c.peek(1) == "ip" || c.peek(1) == "ip6") && c.peek(2) == "to" && c.peek(3) == "numgen":
		return c.dnatMap()
	case t == "dnat" && c.peek(1) == "to":
		return c.dnatTo()
	case t == "update" && strings.HasPrefix(c.peek(1), "@") && c.peek(2) == "{" && c.peek(5) == "}":
		return c.update()
	default:
		return c.errorf("cannot compile at %q", t)
	}
	return nil
}

// ctFlag compiles "ct state new" and "ct status dnat": a conntrack key
// with a bit set.
func (c *ruleCompiler) ctFlag(key expr.CtKey, bit uint32) {
	c.i += 3
	c.add(&expr.Ct{Register: regFirst, Key: key},
		&expr.Bitwise{SourceRegister: regFirst, DestRegister: regFirst, Len: 4, Mask: hostU32(bit), Xor: hostU32(0)},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: regFirst, Data: hostU32(0)})
}

// markMatch compiles "meta mark & M == V".
func (c *ruleCompiler) markMatch() error {
	m, err1 := strconv.ParseUint(c.peek(3), 0, 32)
	v, err2 := strconv.ParseUint(c.peek(5), 0, 32)
	if err1 != nil || err2 != nil || c.peek(4) != "==" {
		return c.errorf("bad mark match")
	}
	c.i += 6
	c.add(&expr.Meta{Key: expr.MetaKeyMARK, Register: regFirst},
		&expr.Bitwise{SourceRegister: regFirst, DestRegister: regFirst, Len: 4, Mask: hostU32(uint32(m)), Xor: hostU32(0)},
		&expr.Cmp{Op: expr.CmpOpEq, Register: regFirst, Data: hostU32(uint32(v))})
	return nil
}

// markSet compiles "meta mark set meta mark ^ M" and "... | M".
func (c *ruleCompiler) markSet() error {
	m, err := strconv.ParseUint(c.peek(6), 0, 32)
	if err != nil || c.peek(3) != "meta" || c.peek(4) != "mark" {
		return c.errorf("bad mark statement")
	}
	mask, xor := ^uint32(0), uint32(m)
	switch c.peek(5) {
	case "^":
	case "|":
		mask = ^uint32(m)
	default:
		return c.errorf("bad mark operator %q", c.peek(5))
	}
	c.i += 7
	c.add(&expr.Meta{Key: expr.MetaKeyMARK, Register: regFirst},
		&expr.Bitwise{SourceRegister: regFirst, DestRegister: regFirst, Len: 4, Mask: hostU32(mask), Xor: hostU32(xor)},
		&expr.Meta{Key: expr.MetaKeyMARK, SourceRegister: true, Register: regFirst})
	return nil
}

// l4protoMatch compiles "meta l4proto P".
func (c *ruleCompiler) l4protoMatch() error {
	p, ok := protoNum(c.peek(2))
	if !ok {
		return c.errorf("unknown protocol %q", c.peek(2))
	}
	c.i += 3
	c.add(&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: regFirst},
		&expr.Cmp{Op: expr.CmpOpEq, Register: regFirst, Data: []byte{p}})
	return nil
}

// fibLocal compiles "fib saddr type local" and "fib daddr type local".
func (c *ruleCompiler) fibLocal() error {
	f := &expr.Fib{Register: regFirst, ResultADDRTYPE: true}
	switch c.peek(1) {
	case "saddr":
		f.FlagSADDR = true
	case "daddr":
		f.FlagDADDR = true
	default:
		return c.errorf("bad fib")
	}
	c.i += 4
	c.add(f, &expr.Cmp{Op: expr.CmpOpEq, Register: regFirst, Data: hostU32(rtnLocal)})
	return nil
}

// numgen compiles "numgen random mod N == V" and "numgen random mod N vmap
// { ... }".
func (c *ruleCompiler) numgen() error {
	mod, err := strconv.ParseUint(c.peek(3), 10, 32)
	if err != nil {
		return c.errorf("bad numgen modulus")
	}
	c.i += 4
	c.add(&expr.Numgen{Register: regFirst, Modulus: uint32(mod), Type: unix.NFT_NG_RANDOM})
	switch c.peek(0) {
	case "==":
		v, err := strconv.ParseUint(c.peek(1), 10, 32)
		if err != nil {
			return c.errorf("bad numgen value")
		}
		c.i += 2
		c.add(&expr.Cmp{Op: expr.CmpOpEq, Register: regFirst, Data: hostU32(uint32(v))})
		return nil
	case "vmap":
		return c.anonVmap()
	default:
		return c.errorf("bad numgen use")
	}
}

// portMatch compiles "tcp dport P" and "tcp dport P-Q" (and udp, sctp).
func (c *ruleCompiler) portMatch() error {
	p, _ := protoNum(c.peek(0))
	from, to, isRange := strings.Cut(c.peek(2), "-")
	port, err := strconv.ParseUint(from, 10, 16)
	end := port
	if err == nil && isRange {
		end, err = strconv.ParseUint(to, 10, 16)
	}
	if err != nil || end < port {
		return c.errorf("bad port")
	}
	c.i += 3
	c.add(&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: regFirst},
		&expr.Cmp{Op: expr.CmpOpEq, Register: regFirst, Data: []byte{p}},
		&expr.Payload{DestRegister: regFirst, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2})
	if isRange {
		c.add(&expr.Range{Op: expr.CmpOpEq, Register: regFirst, FromData: be16(uint16(port)), ToData: be16(uint16(end))})
	} else {
		c.add(&expr.Cmp{Op: expr.CmpOpEq, Register: regFirst, Data: be16(uint16(port))})
	}
	return nil
}

// natFamily is the NAT statement's family.
func (c *ruleCompiler) natFamily() uint32 {
	if c.ip6 {
		return unix.NFPROTO_IPV6
	}
	return unix.NFPROTO_IPV4
}

// dnatMap compiles "dnat ip to numgen random mod N offset B map @S".
func (c *ruleCompiler) dnatMap() error {
	mod, err1 := strconv.ParseUint(c.peek(6), 10, 32)
	off, err2 := strconv.ParseUint(c.peek(8), 10, 32)
	if err1 != nil || err2 != nil || c.peek(4) != "random" || c.peek(5) != "mod" || c.peek(7) != "offset" ||
		c.peek(9) != "map" || !strings.HasPrefix(c.peek(10), "@") {
		return c.errorf("bad dnat map")
	}
	set := c.peek(10)[1:]
	c.i += 11
	protoReg := uint32(reg32Base + 1)
	if c.ip6 {
		protoReg = 2
	}
	c.add(&expr.Numgen{Register: regFirst, Modulus: uint32(mod), Type: unix.NFT_NG_RANDOM, Offset: uint32(off)},
		&expr.Lookup{SourceRegister: regFirst, SetName: set, IsDestRegSet: true, DestRegister: regFirst},
		&expr.NAT{Type: expr.NATTypeDestNAT, Family: c.natFamily(), RegAddrMin: regFirst, RegAddrMax: regFirst,
			RegProtoMin: protoReg, RegProtoMax: protoReg, Specified: true})
	return nil
}

// dnatTo compiles "dnat to ADDR:PORT".
func (c *ruleCompiler) dnatTo() error {
	ap, err := netip.ParseAddrPort(c.peek(2))
	if err != nil {
		return c.errorf("bad dnat target: %v", err)
	}
	c.i += 3
	c.add(&expr.Immediate{Register: 1, Data: ap.Addr().AsSlice()},
		&expr.Immediate{Register: 2, Data: be16(ap.Port())},
		&expr.NAT{Type: expr.NATTypeDestNAT, Family: c.natFamily(), RegAddrMin: 1, RegProtoMin: 2, Specified: true})
	return nil
}

// update compiles "update @S { SEL }".
func (c *ruleCompiler) update() error {
	set := strings.TrimPrefix(c.peek(1), "@")
	c.i += 3
	sel, err := c.parseSelector()
	if err != nil {
		return err
	}
	c.i++
	if err := c.depend(sel); err != nil {
		return err
	}
	c.add(sel.load(regFirst)...)
	c.add(&expr.Dynset{SrcRegKey: regFirst, SetName: set, Operation: unix.NFT_DYNSET_OP_UPDATE})
	return nil
}

// addrMatch compares an address selector with an address or prefix.
func (c *ruleCompiler) addrMatch(sel selector, op expr.CmpOp, v string) error {
	pfx, err := netip.ParsePrefix(v)
	if err != nil {
		a, err2 := netip.ParseAddr(v)
		if err2 != nil {
			return c.errorf("bad address %q", v)
		}
		pfx = netip.PrefixFrom(a, a.BitLen())
	}
	if uint32(pfx.Addr().BitLen()/8) != sel.len {
		return c.errorf("address %q of the wrong family", v)
	}
	if err := c.depend(sel); err != nil {
		return err
	}
	c.add(sel.load(regFirst)...)
	if pfx.Bits() < pfx.Addr().BitLen() {
		m := make([]byte, sel.len)
		for i := 0; i < pfx.Bits(); i++ {
			m[i/8] |= 0x80 >> (i % 8)
		}
		c.add(&expr.Bitwise{SourceRegister: regFirst, DestRegister: regFirst, Len: sel.len, Mask: m, Xor: make([]byte, sel.len)})
	}
	c.add(&expr.Cmp{Op: op, Register: regFirst, Data: pfx.Masked().Addr().AsSlice()})
	return nil
}

// concatLookup compiles "SEL [. SEL ...] @set" and "SEL [. SEL ...] vmap @map".
func (c *ruleCompiler) concatLookup() error {
	var sels []selector
	for {
		sel, err := c.parseSelector()
		if err != nil {
			return err
		}
		sels = append(sels, sel)
		if c.peek(0) != "." {
			break
		}
		c.i++
	}
	// The family checks use the first register: all before the loads.
	for _, sel := range sels {
		if err := c.depend(sel); err != nil {
			return err
		}
	}
	var off uint32
	for _, sel := range sels {
		reg := uint32(regFirst)
		if off > 0 {
			reg = reg32Base + off/4
		}
		c.add(sel.load(reg)...)
		off += (sel.len + 3) &^ 3
	}
	switch t := c.next(); {
	case strings.HasPrefix(t, "@"):
		c.lookup(t[1:], false)
	case t == "vmap" && strings.HasPrefix(c.peek(0), "@"):
		c.lookup(c.next()[1:], true)
	default:
		return c.errorf("expected a set at %q", t)
	}
	return nil
}

// anonVmap compiles "vmap { 0 : goto X , 1 : goto Y }" after a numgen.
func (c *ruleCompiler) anonVmap() error {
	c.i++ // vmap
	if c.next() != "{" {
		return c.errorf("expected {")
	}
	m := &anonMap{id: c.newID()}
	for {
		k, err := strconv.ParseUint(c.next(), 10, 32)
		if err != nil || c.next() != ":" {
			return c.errorf("bad map element")
		}
		v := c.next()
		if v == "goto" || v == "jump" {
			v += " " + c.next()
		}
		m.elems = append(m.elems, anonElem{key: uint32(k), verdict: v})
		switch c.next() {
		case ",":
			continue
		case "}":
		default:
			return c.errorf("bad map")
		}
		break
	}
	c.anon = m
	c.add(&expr.Lookup{SourceRegister: regFirst, SetName: "__map%d", SetID: m.id, IsDestRegSet: true, DestRegister: 0})
	return nil
}
