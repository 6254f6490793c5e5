package nftbatch

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	gnft "github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
	"sigs.k8s.io/knftables"
)

// Netlink is a Writer that talks nfnetlink to the kernel of the calling
// thread's network namespace, without the nft binary: a transaction is
// encoded into one batch and sent with one sendmsg, which the kernel
// applies (or refuses) atomically before the call returns. It saves nft's
// parsing and, on every run, its fetch of the whole ruleset.
type Netlink struct {
	family knftables.Family
	table  string
	// intKeys names the maps whose keys are numbers in host byte order
	// (typeof numgen), learnt when they are created: element keys in the
	// nft syntax do not say their type.
	intKeys map[string]bool
}

// NewNetlink returns a Netlink writer for one table of family (ip, ip6 or
// inet).
func NewNetlink(family knftables.Family, table string) *Netlink {
	return &Netlink{family: family, table: table, intKeys: map[string]bool{}}
}

// NewTransaction returns a transaction streamed into a batch for n as its
// operations are added (a recorded one if n's family is not supported,
// which Run then refuses).
func (n *Netlink) NewTransaction() *Transaction {
	tx := NewTransaction(n.family, n.table)
	if enc, err := n.newEncoder(); err == nil {
		tx.enc = enc
	}
	return tx
}

// Run implements Writer.
func (n *Netlink) Run(ctx context.Context, tx *Transaction) error {
	enc := tx.enc
	if enc == nil {
		var err error
		if enc, err = n.newEncoder(); err != nil {
			return err
		}
		for i := range tx.ops {
			if err := enc.add(&tx.ops[i]); err != nil {
				return fmt.Errorf("%w: %w", ErrUnsupported, err)
			}
		}
	} else if tx.err != nil {
		return fmt.Errorf("%w: %w", ErrUnsupported, tx.err)
	}
	enc.finish()
	return enc.send()
}

// ErrUnsupported is the error Run returns, before it sends anything, for
// a transaction that uses what the encoder cannot write (rules outside
// the part of the nft language compileRule knows, among others): the
// caller may run it through nft instead.
var ErrUnsupported = errors.New("not supported by the nfnetlink encoder")

// newEncoder starts a batch for n's table.
func (n *Netlink) newEncoder() (*encoder, error) {
	fam, err := familyOf(n.family)
	if err != nil {
		return nil, err
	}
	e := &encoder{fam: fam, family: n.family, table: n.table, ip6: n.family == knftables.IPv6Family, intKeys: n.intKeys, buf: make([]byte, 0, 4096)}
	e.end(e.begin(unix.NFNL_MSG_BATCH_BEGIN, 0))
	return e, nil
}

// List implements Writer.
func (n *Netlink) List(ctx context.Context, kind string) ([]string, error) {
	conn, err := gnft.New()
	if err != nil {
		return nil, fmt.Errorf("nftables netlink: %w", err)
	}
	defer conn.CloseLasting()
	fam := gnft.TableFamilyIPv4
	switch n.family {
	case knftables.IPv6Family:
		fam = gnft.TableFamilyIPv6
	case knftables.InetFamily:
		fam = gnft.TableFamilyINet
	}
	if _, err := conn.ListTableOfFamily(n.table, fam); err != nil {
		return nil, fmt.Errorf("table %s: %w", n.table, err)
	}
	var names []string
	switch kind {
	case "chain":
		chains, err := conn.ListChainsOfTableFamily(fam)
		if err != nil {
			return nil, fmt.Errorf("list chains: %w", err)
		}
		for _, c := range chains {
			if c.Table.Name == n.table {
				names = append(names, c.Name)
			}
		}
	case "set", "map":
		// The kernel keeps maps as sets with a data type.
		sets, err := conn.GetSets(&gnft.Table{Name: n.table, Family: fam})
		if err != nil {
			return nil, fmt.Errorf("list %ss: %w", kind, err)
		}
		for _, s := range sets {
			if !s.Anonymous && s.IsMap == (kind == "map") && !strings.HasPrefix(s.Name, "__") {
				names = append(names, s.Name)
			}
		}
	default:
		return nil, fmt.Errorf("cannot list %q", kind)
	}
	return names, nil
}

// encoder builds one nfnetlink batch, as messages appended to a list of
// chunks: the kernel needs the whole batch in one sendmsg (it applies a
// batch only if BATCH_END is in the same skb), but not in one buffer, so
// a full sync's batch of tens of megabytes is never copied to grow it.
type encoder struct {
	fam    byte
	family knftables.Family
	table  string
	ip6    bool
	// buf is the chunk being written, after the full ones in chunks.
	buf     []byte
	chunks  [][]byte
	seq     uint32
	ids     uint32
	intKeys map[string]bool
	msgs    int
	// lastChunk and lastOff locate the last message before BATCH_END,
	// which asks for the acknowledgement the sender waits for.
	lastChunk, lastOff int
	hasLast            bool
	// elems is the element message being filled, if open.
	elems elemMsg
}

// elemMsg is an open NEWSETELEM or DELSETELEM message: consecutive
// element operations on one set share one.
type elemMsg struct {
	open             bool
	verb             verb
	set              string
	intKeys          bool
	msg, list, start int
}

// Chunks hold 1 MiB and are closed with room for the largest message
// (an element message stops past maxElemBytes), so none is ever grown.
// A batch starts small, as most are (partial syncs), and moves to a full
// chunk past smallBatch.
const (
	chunkSize     = 1 << 20
	chunkHeadroom = 128 << 10
	smallBatch    = 64 << 10
)

// Attributes and user data types x/sys/unix does not name.
const (
	nlmsgHdrLen       = 16
	nftaTableUserdata = 6  // NFTA_TABLE_USERDATA
	nftaChainUserdata = 12 // NFTA_CHAIN_USERDATA
	nftaObjUserdata   = 8  // NFTA_OBJ_USERDATA
	nftObjectCounter  = 1  // NFT_OBJECT_COUNTER
	// libnftnl's comment TLVs: NFTNL_UDATA_{TABLE,CHAIN,RULE,OBJ}_COMMENT
	// are 0, NFTNL_UDATA_SET_COMMENT is 7.
	udataSetComment = 7
)

func (e *encoder) begin(typ uint16, flags uint16) int {
	switch {
	case len(e.buf) > chunkSize-chunkHeadroom:
		e.chunks = append(e.chunks, e.buf)
		e.buf = make([]byte, 0, chunkSize)
	case cap(e.buf) < chunkSize && len(e.buf) > smallBatch:
		// Past a partial sync's size: on to full chunks.
		b := make([]byte, len(e.buf), chunkSize)
		copy(b, e.buf)
		e.buf = b
	}
	start := len(e.buf)
	if typ != unix.NFNL_MSG_BATCH_BEGIN && typ != unix.NFNL_MSG_BATCH_END {
		e.lastChunk, e.lastOff, e.hasLast = len(e.chunks), start, true
	}
	e.seq++
	e.buf = binary.NativeEndian.AppendUint32(e.buf, 0) // length, patched by end
	e.buf = binary.NativeEndian.AppendUint16(e.buf, typ)
	e.buf = binary.NativeEndian.AppendUint16(e.buf, flags|unix.NLM_F_REQUEST)
	e.buf = binary.NativeEndian.AppendUint32(e.buf, e.seq)
	e.buf = binary.NativeEndian.AppendUint32(e.buf, 0)
	// nfgenmsg
	fam := e.fam
	var resID uint16
	if typ == unix.NFNL_MSG_BATCH_BEGIN || typ == unix.NFNL_MSG_BATCH_END {
		fam, resID = unix.AF_UNSPEC, unix.NFNL_SUBSYS_NFTABLES
	}
	e.buf = append(e.buf, fam, unix.NFNETLINK_V0)
	e.buf = binary.BigEndian.AppendUint16(e.buf, resID)
	e.msgs++
	return start
}

func (e *encoder) end(start int) {
	binary.NativeEndian.PutUint32(e.buf[start:], uint32(len(e.buf)-start))
}

func (e *encoder) attr(typ uint16, data []byte) {
	e.buf = binary.NativeEndian.AppendUint16(e.buf, uint16(4+len(data)))
	e.buf = binary.NativeEndian.AppendUint16(e.buf, typ)
	e.buf = append(e.buf, data...)
	for len(e.buf)%4 != 0 {
		e.buf = append(e.buf, 0)
	}
}

func (e *encoder) str(typ uint16, s string) {
	e.buf = binary.NativeEndian.AppendUint16(e.buf, uint16(4+len(s)+1))
	e.buf = binary.NativeEndian.AppendUint16(e.buf, typ)
	e.buf = append(e.buf, s...)
	e.buf = append(e.buf, 0)
	for len(e.buf)%4 != 0 {
		e.buf = append(e.buf, 0)
	}
}

func (e *encoder) u32(typ uint16, v uint32) { e.attr(typ, binary.BigEndian.AppendUint32(nil, v)) }

func (e *encoder) nest(typ uint16) int {
	start := len(e.buf)
	e.buf = binary.NativeEndian.AppendUint32(e.buf, 0)
	binary.NativeEndian.PutUint16(e.buf[start+2:], typ|unix.NLA_F_NESTED)
	return start
}

func (e *encoder) endNest(start int) {
	binary.NativeEndian.PutUint16(e.buf[start:], uint16(len(e.buf)-start))
}

func msgType(m int) uint16 { return uint16(unix.NFNL_SUBSYS_NFTABLES<<8 | m) }

// maxElemBytes bounds the elements in one message: a netlink attribute's
// length is 16 bits.
const maxElemBytes = 60000

// add encodes one operation.
func (e *encoder) add(o *operation) error {
	set, isElem := o.setName()
	if !isElem {
		e.closeElems()
		return e.op(*o)
	}
	if m := &e.elems; m.open && (m.verb != o.verb || m.set != set || len(e.buf)-m.start >= maxElemBytes) {
		e.closeElems()
	}
	if !e.elems.open {
		e.openElems(o.verb, set)
	}
	if err := e.element(o); err != nil {
		return fmt.Errorf("element of %s: %w", set, err)
	}
	return nil
}

// finish ends the batch.
func (e *encoder) finish() {
	e.closeElems()
	e.end(e.begin(unix.NFNL_MSG_BATCH_END, 0))
}

func (e *encoder) openElems(v verb, set string) {
	typ, flags := msgType(unix.NFT_MSG_NEWSETELEM), uint16(unix.NLM_F_CREATE)
	if v == verbDelete {
		typ, flags = msgType(unix.NFT_MSG_DELSETELEM), 0
	}
	m := elemMsg{open: true, verb: v, set: set, intKeys: e.intKeys[set]}
	m.msg = e.begin(typ, flags)
	e.str(unix.NFTA_SET_ELEM_LIST_TABLE, e.table)
	e.str(unix.NFTA_SET_ELEM_LIST_SET, set)
	m.list = e.nest(unix.NFTA_SET_ELEM_LIST_ELEMENTS)
	m.start = len(e.buf)
	e.elems = m
}

func (e *encoder) closeElems() {
	if e.elems.open {
		e.endNest(e.elems.list)
		e.end(e.elems.msg)
		e.elems = elemMsg{}
	}
}

// element writes one element into the open element message.
func (e *encoder) element(o *operation) error {
	le := e.nest(unix.NFTA_LIST_ELEM)
	kn := e.nest(unix.NFTA_SET_ELEM_KEY)
	switch {
	case o.inline() && o.form == formEndpoint:
		k := hostU32Array(o.num)
		e.attr(unix.NFTA_DATA_VALUE, k[:])
		e.endNest(kn)
		if o.verb == verbAdd {
			d := e.nest(unix.NFTA_SET_ELEM_DATA)
			v := e.nest(unix.NFTA_DATA_VALUE)
			e.buf = append(e.buf, o.ep.Addr().AsSlice()...)
			e.buf = binary.BigEndian.AppendUint16(e.buf, o.ep.Port())
			e.buf = append(e.buf, 0, 0)
			e.endNest(v)
			e.endNest(d)
		}
	case o.inline() && o.form == formAddrPair:
		v := e.nest(unix.NFTA_DATA_VALUE)
		a := o.addr.AsSlice()
		e.buf = append(append(e.buf, a...), a...)
		e.endNest(v)
		e.endNest(kn)
	default:
		k, value := o.text()
		var err error
		if e.elems.intKeys && !strings.Contains(k, " . ") {
			var n uint64
			n, err = strconv.ParseUint(k, 10, 32)
			e.attr(unix.NFTA_DATA_VALUE, hostU32(uint32(n)))
		} else {
			err = e.concat(unix.NFTA_DATA_VALUE, k)
		}
		if err != nil {
			return err
		}
		e.endNest(kn)
		if o.verb == verbAdd && value != "" {
			if err := e.elemData(value); err != nil {
				return err
			}
		}
	}
	e.endNest(le)
	return nil
}

// hostU32Array is v in host byte order, without allocating.
func hostU32Array(v uint32) (b [4]byte) {
	binary.NativeEndian.PutUint32(b[:], v)
	return b
}

func (e *encoder) op(o operation) error {
	switch obj := o.obj.(type) {
	case *knftables.Table:
		switch o.verb {
		case verbAdd:
			m := e.begin(msgType(unix.NFT_MSG_NEWTABLE), unix.NLM_F_CREATE)
			e.str(unix.NFTA_TABLE_NAME, e.table)
			if obj.Comment != nil {
				e.attr(nftaTableUserdata, udataString(0, *obj.Comment))
			}
			e.end(m)
		case verbDelete:
			m := e.begin(msgType(unix.NFT_MSG_DELTABLE), 0)
			e.str(unix.NFTA_TABLE_NAME, e.table)
			e.end(m)
		case verbFlush:
			return fmt.Errorf("flush table is not supported")
		}
	case *knftables.Chain:
		switch o.verb {
		case verbAdd:
			m := e.begin(msgType(unix.NFT_MSG_NEWCHAIN), unix.NLM_F_CREATE)
			e.str(unix.NFTA_CHAIN_TABLE, e.table)
			e.str(unix.NFTA_CHAIN_NAME, obj.Name)
			if obj.Hook != nil {
				hook, err := hookNum(*obj.Hook)
				if err != nil {
					return err
				}
				prio, err := knftables.ParsePriority(knftables.IPv4Family, string(ptrOr(obj.Priority, "")))
				if err != nil {
					return fmt.Errorf("chain %s: %w", obj.Name, err)
				}
				h := e.nest(unix.NFTA_CHAIN_HOOK)
				e.u32(unix.NFTA_HOOK_HOOKNUM, hook)
				e.u32(unix.NFTA_HOOK_PRIORITY, uint32(int32(prio)))
				e.endNest(h)
				e.str(unix.NFTA_CHAIN_TYPE, string(ptrOr(obj.Type, knftables.FilterType)))
			}
			if obj.Comment != nil {
				e.attr(nftaChainUserdata, udataString(0, *obj.Comment))
			}
			e.end(m)
		case verbFlush:
			m := e.begin(msgType(unix.NFT_MSG_DELRULE), 0)
			e.str(unix.NFTA_RULE_TABLE, e.table)
			e.str(unix.NFTA_RULE_CHAIN, obj.Name)
			e.end(m)
		case verbDelete:
			m := e.begin(msgType(unix.NFT_MSG_DELCHAIN), 0)
			e.str(unix.NFTA_CHAIN_TABLE, e.table)
			e.str(unix.NFTA_CHAIN_NAME, obj.Name)
			e.end(m)
		}
	case *knftables.Set:
		if obj.TypeOf != "" || obj.Size != nil || obj.Policy != nil || obj.AutoMerge != nil {
			return fmt.Errorf("set %s: only type, flags, timeout and comment are supported", obj.Name)
		}
		return e.set(o.verb, obj.Name, obj.Type, obj.Flags, obj.Timeout, obj.Comment, false)
	case *knftables.Map:
		if obj.TypeOf != "" {
			if o.verb != verbAdd {
				return e.set(o.verb, obj.Name, "", nil, nil, nil, true)
			}
			return e.numgenMap(obj.Name, obj.TypeOf)
		}
		if obj.Size != nil || obj.Policy != nil {
			return fmt.Errorf("map %s: only type, flags, timeout and comment are supported", obj.Name)
		}
		return e.set(o.verb, obj.Name, obj.Type, obj.Flags, obj.Timeout, obj.Comment, true)
	case *knftables.Counter:
		return e.counter(o.verb, obj)
	case *knftables.Element:
		// Only flushes get here: set and map flushes are written as
		// element deletions without elements.
		m := e.begin(msgType(unix.NFT_MSG_DELSETELEM), 0)
		e.str(unix.NFTA_SET_ELEM_LIST_TABLE, e.table)
		e.str(unix.NFTA_SET_ELEM_LIST_SET, obj.Set+obj.Map)
		e.end(m)
	case *knftables.Rule:
		if o.verb != verbAdd || obj.Index != nil || obj.Handle != nil {
			return fmt.Errorf("rule operation not supported: %v", obj.Rule)
		}
		exprs, anon, err := compileRule(e.family, obj.Rule, func() uint32 { e.ids++; return e.ids })
		if err != nil {
			return err
		}
		if anon != nil {
			e.anonMap(anon)
		}
		m := e.begin(msgType(unix.NFT_MSG_NEWRULE), unix.NLM_F_CREATE|unix.NLM_F_APPEND)
		e.str(unix.NFTA_RULE_TABLE, e.table)
		e.str(unix.NFTA_RULE_CHAIN, obj.Chain)
		l := e.nest(unix.NFTA_RULE_EXPRESSIONS)
		for _, x := range exprs {
			b, err := expr.Marshal(e.fam, x)
			if err != nil {
				return fmt.Errorf("rule %q: %w", obj.Rule, err)
			}
			e.attr(unix.NLA_F_NESTED|unix.NFTA_LIST_ELEM, b)
		}
		e.endNest(l)
		if obj.Comment != nil {
			e.attr(unix.NFTA_RULE_USERDATA, udataString(0, *obj.Comment))
		}
		e.end(m)
	default:
		return fmt.Errorf("unsupported nftables object %T", o.obj)
	}
	return nil
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// udataString is one libnftnl user-data TLV holding a string (a comment).
func udataString(typ byte, s string) []byte {
	return append([]byte{typ, byte(len(s) + 1)}, append([]byte(s), 0)...)
}

func hookNum(h knftables.BaseChainHook) (uint32, error) {
	switch h {
	case knftables.PreroutingHook:
		return unix.NF_INET_PRE_ROUTING, nil
	case knftables.InputHook:
		return unix.NF_INET_LOCAL_IN, nil
	case knftables.ForwardHook:
		return unix.NF_INET_FORWARD, nil
	case knftables.OutputHook:
		return unix.NF_INET_LOCAL_OUT, nil
	case knftables.PostroutingHook:
		return unix.NF_INET_POST_ROUTING, nil
	}
	return 0, fmt.Errorf("unsupported hook %q", h)
}

// nft's datatype numbers, which it reads back from the set's key type to
// print elements; concatenations shift each part in by 6 bits.
var datatypes = map[string]struct{ id, len uint32 }{
	"ipv4_addr":    {7, 4},
	"ipv6_addr":    {8, 16},
	"inet_proto":   {12, 1},
	"inet_service": {13, 2},
	"integer":      {4, 4},
	"mark":         {19, 4},
}

// counter adds or deletes a named counter (flushing one is not supported).
func (e *encoder) counter(v verb, c *knftables.Counter) error {
	if c.Packets != nil || c.Bytes != nil {
		return fmt.Errorf("counter %s: initial values are not supported", c.Name)
	}
	switch v {
	case verbAdd:
		m := e.begin(msgType(unix.NFT_MSG_NEWOBJ), unix.NLM_F_CREATE)
		e.str(unix.NFTA_OBJ_TABLE, e.table)
		e.str(unix.NFTA_OBJ_NAME, c.Name)
		e.u32(unix.NFTA_OBJ_TYPE, nftObjectCounter)
		d := e.nest(unix.NFTA_OBJ_DATA)
		e.attr(unix.NFTA_COUNTER_BYTES, make([]byte, 8))
		e.attr(unix.NFTA_COUNTER_PACKETS, make([]byte, 8))
		e.endNest(d)
		if c.Comment != nil {
			e.attr(nftaObjUserdata, udataString(0, *c.Comment))
		}
		e.end(m)
	case verbDelete:
		m := e.begin(msgType(unix.NFT_MSG_DELOBJ), 0)
		e.str(unix.NFTA_OBJ_TABLE, e.table)
		e.str(unix.NFTA_OBJ_NAME, c.Name)
		e.u32(unix.NFTA_OBJ_TYPE, nftObjectCounter)
		e.end(m)
	default:
		return fmt.Errorf("counter %s: flush is not supported", c.Name)
	}
	return nil
}

func (e *encoder) set(v verb, name, typ string, flags []knftables.SetFlag, timeout *time.Duration, comment *string, isMap bool) error {
	switch v {
	case verbFlush:
		m := e.begin(msgType(unix.NFT_MSG_DELSETELEM), 0)
		e.str(unix.NFTA_SET_ELEM_LIST_TABLE, e.table)
		e.str(unix.NFTA_SET_ELEM_LIST_SET, name)
		e.end(m)
		return nil
	case verbDelete:
		m := e.begin(msgType(unix.NFT_MSG_DELSET), 0)
		e.str(unix.NFTA_SET_TABLE, e.table)
		e.str(unix.NFTA_SET_NAME, name)
		e.end(m)
		return nil
	}
	keyType, value, _ := strings.Cut(typ, " : ")
	var magic, klen uint32
	parts := strings.Split(keyType, " . ")
	for _, p := range parts {
		d, ok := datatypes[strings.TrimSpace(p)]
		if !ok {
			return fmt.Errorf("set %s: unsupported type %q", name, p)
		}
		magic = magic<<6 | d.id
		if len(parts) > 1 {
			klen += (d.len + 3) &^ 3
		} else {
			klen += d.len
		}
	}
	var f uint32
	if isMap {
		if strings.TrimSpace(value) != "verdict" {
			return fmt.Errorf("map %s: unsupported value type %q", name, value)
		}
		f |= unix.NFT_SET_MAP
	}
	for _, fl := range flags {
		switch fl {
		case knftables.DynamicFlag:
			f |= unix.NFT_SET_EVAL
		case knftables.TimeoutFlag:
			f |= unix.NFT_SET_TIMEOUT
		default:
			return fmt.Errorf("set %s: unsupported flag %q", name, fl)
		}
	}
	e.ids++
	m := e.begin(msgType(unix.NFT_MSG_NEWSET), unix.NLM_F_CREATE)
	e.str(unix.NFTA_SET_TABLE, e.table)
	e.str(unix.NFTA_SET_NAME, name)
	e.u32(unix.NFTA_SET_FLAGS, f)
	e.u32(unix.NFTA_SET_KEY_TYPE, magic)
	e.u32(unix.NFTA_SET_KEY_LEN, klen)
	e.u32(unix.NFTA_SET_ID, e.ids)
	if isMap {
		e.u32(unix.NFTA_SET_DATA_TYPE, unix.NFT_DATA_VERDICT)
		e.u32(unix.NFTA_SET_DATA_LEN, 16)
	}
	if timeout != nil {
		e.attr(unix.NFTA_SET_TIMEOUT, binary.BigEndian.AppendUint64(nil, uint64(timeout.Milliseconds())))
	}
	if comment != nil {
		e.attr(unix.NFTA_SET_USERDATA, udataString(udataSetComment, *comment))
	}
	e.end(m)
	return nil
}

// numgenUserdata is the user data nft 1.0.6 attaches to a map declared
// "typeof numgen random mod 1 : ip daddr . tcp dport" (ip6, udp, sctp
// alike), so that nft lists the map and its host-order keys as it would
// its own, and accepts rules that use it. It is libnftnl TLVs of host
// order integers: key byte order (host), data byte order, the key's
// expression (numgen, type random, modulus 1, offset 0) and the data's
// (a concatenation of two payload expressions, each a protocol
// description and a field number).
func numgenUserdata(ip6 bool, proto byte) []byte {
	netDesc, netField := byte(12), byte(12) // PROTO_DESC_IP, IPHDR_DADDR
	if ip6 {
		netDesc, netField = 13, 9 // PROTO_DESC_IP6, IP6HDR_DST
	}
	var l4Desc byte
	switch proto {
	case unix.IPPROTO_TCP:
		l4Desc = 8 // PROTO_DESC_TCP
	case unix.IPPROTO_UDP:
		l4Desc = 6 // PROTO_DESC_UDP
	case unix.IPPROTO_SCTP:
		l4Desc = 10 // PROTO_DESC_SCTP
	}
	return []byte{
		0x00, 0x04, 0x01, 0x00, 0x00, 0x00, // key byte order: host
		0x01, 0x04, 0x00, 0x00, 0x00, 0x00, // data byte order
		0x03, 0x1a, // key typeof
		0x00, 0x04, 0x17, 0x00, 0x00, 0x00, // expression: numgen
		0x01, 0x12, 0x00, 0x04, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x00, 0x00, 0x00, 0x02, 0x04, 0x00, 0x00, 0x00, 0x00,
		0x04, 0x34, // data typeof
		0x00, 0x04, 0x0d, 0x00, 0x00, 0x00, // expression: concatenation
		0x01, 0x2c,
		0x00, 0x14, 0x00, 0x04, 0x07, 0x00, 0x00, 0x00, // payload
		0x01, 0x0c, 0x00, 0x04, netDesc, 0x00, 0x00, 0x00, 0x01, 0x04, netField, 0x00, 0x00, 0x00,
		0x01, 0x14, 0x00, 0x04, 0x07, 0x00, 0x00, 0x00, // payload
		0x01, 0x0c, 0x00, 0x04, l4Desc, 0x00, 0x00, 0x00, 0x01, 0x04, 0x02, 0x00, 0x00, 0x00, // dport
		0x01, 0x04, 0x02, 0x00, 0x00, 0x00, 0x06, 0x04, 0x00, 0x00, 0x00, 0x00,
	}
}

// numgenMap creates an endpoints map: numbers to address . port.
func (e *encoder) numgenMap(name, typeOf string) error {
	addr := "ip"
	if e.ip6 {
		addr = "ip6"
	}
	rest, ok := strings.CutPrefix(typeOf, "numgen random mod 1 : "+addr+" daddr . ")
	proto, ok2 := protoNum(strings.TrimSuffix(rest, " dport"))
	if !ok || !ok2 || !strings.HasSuffix(rest, " dport") {
		return fmt.Errorf("map %s: unsupported typeof %q", name, typeOf)
	}
	a := datatypes["ipv4_addr"]
	if e.ip6 {
		a = datatypes["ipv6_addr"]
	}
	e.ids++
	m := e.begin(msgType(unix.NFT_MSG_NEWSET), unix.NLM_F_CREATE)
	e.str(unix.NFTA_SET_TABLE, e.table)
	e.str(unix.NFTA_SET_NAME, name)
	e.u32(unix.NFTA_SET_FLAGS, unix.NFT_SET_MAP)
	e.u32(unix.NFTA_SET_KEY_TYPE, datatypes["integer"].id)
	e.u32(unix.NFTA_SET_KEY_LEN, 4)
	e.u32(unix.NFTA_SET_DATA_TYPE, a.id<<6|datatypes["inet_service"].id)
	e.u32(unix.NFTA_SET_DATA_LEN, a.len+4)
	e.u32(unix.NFTA_SET_ID, e.ids)
	e.attr(unix.NFTA_SET_USERDATA, numgenUserdata(e.ip6, proto))
	e.end(m)
	e.intKeys[name] = true
	return nil
}

// anonMap writes an anonymous constant verdict map keyed by integers.
func (e *encoder) anonMap(a *anonMap) {
	m := e.begin(msgType(unix.NFT_MSG_NEWSET), unix.NLM_F_CREATE)
	e.str(unix.NFTA_SET_TABLE, e.table)
	e.str(unix.NFTA_SET_NAME, "__map%d")
	e.u32(unix.NFTA_SET_FLAGS, unix.NFT_SET_ANONYMOUS|unix.NFT_SET_CONSTANT|unix.NFT_SET_MAP)
	e.u32(unix.NFTA_SET_KEY_TYPE, datatypes["integer"].id)
	e.u32(unix.NFTA_SET_KEY_LEN, 4)
	e.u32(unix.NFTA_SET_ID, a.id)
	e.u32(unix.NFTA_SET_DATA_TYPE, unix.NFT_DATA_VERDICT)
	e.u32(unix.NFTA_SET_DATA_LEN, 16)
	// The key is in host byte order, as numgen produces it; nft reads
	// that from the set's user data (NFTNL_UDATA_SET_KEYBYTEORDER,
	// BYTEORDER_HOST_ENDIAN) to print the keys.
	e.attr(unix.NFTA_SET_USERDATA, append([]byte{0, 4}, hostU32(1)...))
	e.end(m)
	m = e.begin(msgType(unix.NFT_MSG_NEWSETELEM), unix.NLM_F_CREATE)
	e.str(unix.NFTA_SET_ELEM_LIST_TABLE, e.table)
	e.str(unix.NFTA_SET_ELEM_LIST_SET, "__map%d")
	e.u32(unix.NFTA_SET_ELEM_LIST_SET_ID, a.id)
	l := e.nest(unix.NFTA_SET_ELEM_LIST_ELEMENTS)
	for _, el := range a.elems {
		le := e.nest(unix.NFTA_LIST_ELEM)
		k := e.nest(unix.NFTA_SET_ELEM_KEY)
		e.attr(unix.NFTA_DATA_VALUE, hostU32(el.key))
		e.endNest(k)
		e.verdictData(el.verdict)
		e.endNest(le)
	}
	e.endNest(l)
	e.end(m)
}

func (e *encoder) verdictData(v string) error {
	kind, chain, _ := strings.Cut(v, " ")
	var code int32
	switch kind {
	case "goto":
		code = unix.NFT_GOTO
	case "jump":
		code = unix.NFT_JUMP
	case "drop":
		code = 0
	case "accept":
		code = 1
	case "return":
		code = unix.NFT_RETURN
	default:
		return fmt.Errorf("unsupported verdict %q", v)
	}
	d := e.nest(unix.NFTA_SET_ELEM_DATA)
	vd := e.nest(unix.NFTA_DATA_VERDICT)
	e.u32(unix.NFTA_VERDICT_CODE, uint32(code))
	if chain != "" {
		e.str(unix.NFTA_VERDICT_CHAIN, chain)
	}
	e.endNest(vd)
	e.endNest(d)
	return nil
}

// elemData writes an element's value: a verdict, or data such as
// "10.0.0.1 . 8080".
func (e *encoder) elemData(v string) error {
	switch kind, _, _ := strings.Cut(v, " "); kind {
	case "goto", "jump", "drop", "accept", "return":
		return e.verdictData(v)
	}
	d := e.nest(unix.NFTA_SET_ELEM_DATA)
	if err := e.concat(unix.NFTA_DATA_VALUE, v); err != nil {
		return err
	}
	e.endNest(d)
	return nil
}

// concat writes attribute typ holding a key or value in nft syntax:
// addresses, protocol names and port numbers joined by " . ", each part
// of a concatenation padded to 4 bytes.
func (e *encoder) concat(typ uint16, s string) error {
	start := len(e.buf)
	e.buf = binary.NativeEndian.AppendUint32(e.buf, 0)
	multi := strings.Contains(s, " . ")
	for s != "" {
		part, rest, _ := strings.Cut(s, " . ")
		s = rest
		n := len(e.buf)
		if a, err := netip.ParseAddr(part); err == nil {
			if a.Is4() {
				b := a.As4()
				e.buf = append(e.buf, b[:]...)
			} else {
				b := a.As16()
				e.buf = append(e.buf, b[:]...)
			}
		} else if p, ok := protoNum(part); ok {
			e.buf = append(e.buf, p)
		} else if v, err := strconv.ParseUint(part, 10, 16); err == nil {
			e.buf = binary.BigEndian.AppendUint16(e.buf, uint16(v))
		} else {
			return fmt.Errorf("unsupported element part %q", part)
		}
		for multi && (len(e.buf)-n)%4 != 0 {
			e.buf = append(e.buf, 0)
		}
	}
	binary.NativeEndian.PutUint16(e.buf[start:], uint16(len(e.buf)-start))
	binary.NativeEndian.PutUint16(e.buf[start+2:], typ)
	for len(e.buf)%4 != 0 {
		e.buf = append(e.buf, 0)
	}
	return nil
}

// markLast asks for an acknowledgement of the last message before
// BATCH_END and returns its sequence number, or false if the batch is
// empty.
func (e *encoder) markLast() (uint32, bool) {
	if !e.hasLast {
		return 0, false
	}
	var last []byte
	if e.lastChunk < len(e.chunks) {
		last = e.chunks[e.lastChunk][e.lastOff:]
	} else {
		last = e.buf[e.lastOff:]
	}
	fl := binary.NativeEndian.Uint16(last[6:])
	binary.NativeEndian.PutUint16(last[6:], fl|unix.NLM_F_ACK)
	return binary.NativeEndian.Uint32(last[8:]), true
}

// send writes the batch with one sendmsg and reads the kernel's answer.
// The kernel processes a batch synchronously inside sendmsg; only the
// last message asks for an acknowledgement, so the reply is either that
// acknowledgement or errors for the messages that failed.
func (e *encoder) send() error {
	lastSeq, ok := e.markLast()
	if !ok {
		return nil
	}
	bufs := append(e.chunks, e.buf)
	size := 0
	for _, b := range bufs {
		size += len(b)
	}

	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
	if err != nil {
		return fmt.Errorf("nfnetlink socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("nfnetlink bind: %w", err)
	}
	// The whole batch must fit the socket's send buffer.
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, size+4096); err != nil {
		return fmt.Errorf("nfnetlink send buffer: %w", err)
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 4<<20)
	_ = unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_EXT_ACK, 1)
	if _, err := unix.SendmsgBuffers(fd, bufs, nil, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}, 0); err != nil {
		return fmt.Errorf("nfnetlink send (%d bytes, %d messages): %w", size, e.msgs, err)
	}
	// The kernel holds its own copy now.
	e.chunks, e.buf = nil, nil
	var errs []error
	rbuf := make([]byte, 1<<16)
	for {
		// The kernel answered before sendmsg returned: whatever is not
		// queued now never comes.
		n, _, err := unix.Recvfrom(fd, rbuf, unix.MSG_DONTWAIT)
		if err != nil {
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if errors.Is(err, unix.EAGAIN) && len(errs) == 0 {
				return fmt.Errorf("nftables batch (%d messages): no acknowledgement", e.msgs)
			}
			if errors.Is(err, unix.EAGAIN) {
				break
			}
			return fmt.Errorf("nfnetlink receive: %w", err)
		}
		done := false
		for off := 0; off+nlmsgHdrLen <= n; {
			l := int(binary.NativeEndian.Uint32(rbuf[off:]))
			typ := binary.NativeEndian.Uint16(rbuf[off+4:])
			seq := binary.NativeEndian.Uint32(rbuf[off+8:])
			if l < nlmsgHdrLen || off+l > n {
				break
			}
			if typ == unix.NLMSG_ERROR && l >= nlmsgHdrLen+4 {
				code := int32(binary.NativeEndian.Uint32(rbuf[off+nlmsgHdrLen:]))
				if code != 0 {
					errs = append(errs, fmt.Errorf("message %d: %w", seq, syscall.Errno(-code)))
				}
				if seq == lastSeq {
					done = true
				}
			}
			off += (l + 3) &^ 3
		}
		if done {
			break
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("nftables batch (%d messages) refused: %w", e.msgs, errors.Join(errs...))
	}
	return nil
}
