// Package nftbatch writes nftables transactions to the kernel: as one
// nfnetlink batch, encoded here without the nft binary (Netlink), or
// through sigs.k8s.io/knftables (Exec: the nft binary, or its fake in
// tests). A transaction is operations on knftables objects, plus elements
// held inline for the writers of 10^5 elements; the rules Netlink compiles
// are a small part of the nft language (see compileRule), and what it
// cannot write it refuses before sending anything (ErrUnsupported).
package nftbatch

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
	"sigs.k8s.io/knftables"
)

// Transaction is what one sync writes: operations on knftables objects in
// order. A recorded transaction can be replayed into a
// knftables.Transaction (for the nft binary and the golden-file tests) or
// encoded as one nfnetlink batch; a streamed one (for the Netlink writer)
// is encoded as each operation is added, so that a full sync never holds
// its 10^5 operations as Go values besides their encoding.
type Transaction struct {
	family knftables.Family
	table  string
	ops    []operation
	// enc, when set, receives the operations instead of ops.
	enc *encoder
	n   int
	// err is the first operation enc could not encode.
	err error
}

type verb uint8

const (
	verbAdd verb = iota
	verbFlush
	verbDelete
)

// operation is one verb on obj, or, when obj is nil, on one element of a
// set or map held inline: a full sync writes some 10^5 elements, and a
// knftables.Element each would be most of its memory.
type operation struct {
	verb verb
	obj  knftables.Object
	// set, key (parts joined by " . ") and value ("" in a set) of an
	// inline element; isMap tells which kind set is.
	set, key, value string
	isMap           bool
	// form says how an inline element's key and value are held: as the
	// text above, or typed (the two kinds of which a full sync writes
	// 10^5, kept out of strings to spare their allocation and parsing).
	form elemForm
	// num and ep are an endpoints-map element: key num, value ep.
	num uint32
	ep  netip.AddrPort
	// addr is a hairpin-set element: key addr . addr.
	addr netip.Addr
}

type elemForm uint8

const (
	formText     elemForm = iota
	formEndpoint          // num : ep.Addr() . ep.Port()
	formAddrPair          // addr . addr
)

// NewTransaction returns an empty transaction on one table of family,
// recorded, for any Writer. Netlink.NewTransaction streams instead.
func NewTransaction(family knftables.Family, table string) *Transaction {
	return &Transaction{family: family, table: table}
}

func (t *Transaction) push(o operation) {
	t.n++
	if t.enc == nil {
		t.ops = append(t.ops, o)
		return
	}
	if t.err == nil {
		t.err = t.enc.add(&o)
	}
}

// Add adds obj, or does nothing if it exists (elements: sets the value).
func (t *Transaction) Add(obj knftables.Object) {
	t.push(operation{verb: verbAdd, obj: obj})
}

// Flush empties a chain, set or map.
func (t *Transaction) Flush(obj knftables.Object) {
	t.push(operation{verb: verbFlush, obj: obj})
}

// Delete removes obj.
func (t *Transaction) Delete(obj knftables.Object) {
	t.push(operation{verb: verbDelete, obj: obj})
}

// AddElement adds an element to a set (value "") or map.
func (t *Transaction) AddElement(set, key, value string, isMap bool) {
	t.push(operation{verb: verbAdd, set: set, key: key, value: value, isMap: isMap})
}

// DeleteElement deletes the element with key from a set or map.
func (t *Transaction) DeleteElement(set, key string, isMap bool) {
	t.push(operation{verb: verbDelete, set: set, key: key, isMap: isMap})
}

// AddEndpoint adds element key : ep to the endpoints map set.
func (t *Transaction) AddEndpoint(set string, key uint32, ep netip.AddrPort) {
	t.push(operation{verb: verbAdd, set: set, isMap: true, form: formEndpoint, num: key, ep: ep})
}

// DeleteEndpoint deletes the element with key from the endpoints map set.
func (t *Transaction) DeleteEndpoint(set string, key uint32) {
	t.push(operation{verb: verbDelete, set: set, isMap: true, form: formEndpoint, num: key})
}

// AddAddrPair adds element addr . addr to set.
func (t *Transaction) AddAddrPair(set string, addr netip.Addr) {
	t.push(operation{verb: verbAdd, set: set, form: formAddrPair, addr: addr})
}

// DeleteAddrPair deletes element addr . addr from set.
func (t *Transaction) DeleteAddrPair(set string, addr netip.Addr) {
	t.push(operation{verb: verbDelete, set: set, form: formAddrPair, addr: addr})
}

// inline reports whether o is an element held in the operation.
func (o *operation) inline() bool { return o.obj == nil }

// setName returns the set or map of an element operation.
func (o *operation) setName() (string, bool) {
	if o.obj == nil {
		return o.set, true
	}
	if el, isElem := o.obj.(*knftables.Element); isElem && o.verb != verbFlush {
		return el.Set + el.Map, true
	}
	return "", false
}

// text returns an element operation's key and value in nft syntax.
func (o *operation) text() (key, value string) {
	switch {
	case o.obj != nil:
		el := o.obj.(*knftables.Element)
		return strings.Join(el.Key, " . "), strings.Join(el.Value, " ")
	case o.form == formEndpoint:
		if o.verb != verbAdd {
			return strconv.FormatUint(uint64(o.num), 10), ""
		}
		return strconv.FormatUint(uint64(o.num), 10), fmt.Sprintf("%s . %d", o.ep.Addr(), o.ep.Port())
	case o.form == formAddrPair:
		a := o.addr.String()
		return a + " . " + a, ""
	}
	return o.key, o.value
}

// object returns the operation's object, making a knftables.Element of
// an inline element.
func (o *operation) object() knftables.Object {
	if o.obj != nil {
		return o.obj
	}
	key, value := o.text()
	el := &knftables.Element{Key: strings.Split(key, " . ")}
	if o.isMap {
		el.Map = o.set
		if o.verb == verbAdd {
			el.Value = []string{value}
		}
	} else {
		el.Set = o.set
	}
	return el
}

// NumOperations is the number of operations.
func (t *Transaction) NumOperations() int { return t.n }

// Knftables replays the operations into tx. A streamed transaction has
// none to replay.
func (t *Transaction) Knftables(tx *knftables.Transaction) {
	for i := range t.ops {
		o := &t.ops[i]
		switch o.verb {
		case verbAdd:
			tx.Add(o.object())
		case verbFlush:
			tx.Flush(o.object())
		case verbDelete:
			tx.Delete(o.object())
		}
	}
}

// String renders the transaction in nft syntax.
func (t *Transaction) String() string {
	tx := knftables.NewFake(t.family, t.table).NewTransaction()
	t.Knftables(tx)
	return tx.String()
}

// Writer applies transactions to one table and lists what it holds.
type Writer interface {
	// Run applies tx atomically.
	Run(ctx context.Context, tx *Transaction) error
	// List returns the names of the table's objects of one kind, "chain"
	// or "set" (not maps); a missing table is a not-found error.
	List(ctx context.Context, kind string) ([]string, error)
}

// Exec is a Writer that runs transactions through knftables (the nft
// binary, or knftables.NewFake in tests).
type Exec struct{ NFT knftables.Interface }

// Run implements Writer.
func (e Exec) Run(ctx context.Context, tx *Transaction) error {
	if tx.enc != nil {
		return fmt.Errorf("a transaction streamed to netlink cannot run through nft")
	}
	ktx := e.NFT.NewTransaction()
	tx.Knftables(ktx)
	return e.NFT.Run(ctx, ktx)
}

// List implements Writer.
func (e Exec) List(ctx context.Context, kind string) ([]string, error) {
	return e.NFT.List(ctx, kind)
}

// IsNotFound reports whether err says the table or an object in it does
// not exist, from either writer.
func IsNotFound(err error) bool {
	return knftables.IsNotFound(err) || errors.Is(err, unix.ENOENT)
}

func familyOf(f knftables.Family) (byte, error) {
	switch f {
	case knftables.IPv4Family:
		return unix.NFPROTO_IPV4, nil
	case knftables.IPv6Family:
		return unix.NFPROTO_IPV6, nil
	case knftables.InetFamily:
		return unix.NFPROTO_INET, nil
	}
	return 0, fmt.Errorf("unsupported nftables family %q", f)
}
