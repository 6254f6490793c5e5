package nftables

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
	"sigs.k8s.io/knftables"
)

// Transaction is what one sync writes: operations on knftables objects in
// order. It can be replayed into a knftables.Transaction (for the nft
// binary and the golden-file tests) or encoded as one nfnetlink batch.
type Transaction struct {
	family knftables.Family
	table  string
	ops    []operation
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
}

// Add adds obj, or does nothing if it exists (elements: sets the value).
func (t *Transaction) Add(obj knftables.Object) {
	t.ops = append(t.ops, operation{verb: verbAdd, obj: obj})
}

// Flush empties a chain, set or map.
func (t *Transaction) Flush(obj knftables.Object) {
	t.ops = append(t.ops, operation{verb: verbFlush, obj: obj})
}

// Delete removes obj.
func (t *Transaction) Delete(obj knftables.Object) {
	t.ops = append(t.ops, operation{verb: verbDelete, obj: obj})
}

// AddElement adds an element to a set (value "") or map.
func (t *Transaction) AddElement(set, key, value string, isMap bool) {
	t.ops = append(t.ops, operation{verb: verbAdd, set: set, key: key, value: value, isMap: isMap})
}

// DeleteElement deletes the element with key from a set or map.
func (t *Transaction) DeleteElement(set, key string, isMap bool) {
	t.ops = append(t.ops, operation{verb: verbDelete, set: set, key: key, isMap: isMap})
}

// element returns an element operation's set, key and value.
func (o *operation) element() (set, key, value string, ok bool) {
	if o.obj == nil {
		return o.set, o.key, o.value, true
	}
	if el, isElem := o.obj.(*knftables.Element); isElem && o.verb != verbFlush {
		return el.Set + el.Map, strings.Join(el.Key, " . "), strings.Join(el.Value, " "), true
	}
	return "", "", "", false
}

// object returns the operation's object, making a knftables.Element of
// an inline element.
func (o *operation) object() knftables.Object {
	if o.obj != nil {
		return o.obj
	}
	el := &knftables.Element{Key: strings.Split(o.key, " . ")}
	if o.isMap {
		el.Map = o.set
		if o.verb == verbAdd {
			el.Value = []string{o.value}
		}
	} else {
		el.Set = o.set
	}
	return el
}

// NumOperations is the number of operations.
func (t *Transaction) NumOperations() int { return len(t.ops) }

// Knftables replays the operations into tx.
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
