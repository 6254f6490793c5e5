package ruleset

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/knftables"

	"trireme.dev/componentbase/nftbatch"
)

// Writer writes the table through an nftables interface (the nft binary,
// or a fake in tests) and, when Netlink is set, its incremental syncs
// over nfnetlink.
type Writer struct {
	NFT knftables.Interface
	// Netlink, when set, writes the syncs that change the table rather
	// than rewrite it: one batch in one sendmsg spares the nft process,
	// its parsing of every element and its listing of the table, most of
	// the time one pod's labels take to be in force. The nft binary still
	// writes the full syncs and what Netlink cannot encode (rules that
	// log, anonymous sets).
	Netlink *nftbatch.Netlink
	// viaNetlink says the last sync went over nfnetlink (for tests).
	viaNetlink bool
	// last is what the last sync wrote, when it succeeded: the next sync
	// writes only the difference. nil makes it read the table and rewrite
	// it whole.
	last *Objects
}

// Reset makes the next sync rewrite the whole table, repairing whatever
// else changed it.
func (w *Writer) Reset() { w.last = nil }

// NewWriter returns a writer over the nft binary and, for its incremental
// syncs, nfnetlink in the calling thread's network namespace.
func NewWriter() (*Writer, error) {
	nft, err := knftables.New(Family, Table)
	if err != nil {
		return nil, fmt.Errorf("nftables: %w", err)
	}
	return &Writer{NFT: nft, Netlink: nftbatch.NewNetlink(Family, Table)}, nil
}

// Sync makes the table hold exactly want, in one transaction, which the
// kernel applies whole or not at all: when it refuses, the rules in force
// stay. Named counters that remain keep their values.
func (w *Writer) Sync(ctx context.Context, want *Objects) (int, error) {
	var tx *nftbatch.Transaction
	partial := w.last != nil
	if partial {
		tx = w.diff(w.last, want)
	} else {
		var err error
		if tx, err = w.transaction(ctx, want); err != nil {
			return 0, err
		}
	}
	if tx.NumOperations() == 0 {
		return 0, nil
	}
	if err := w.run(ctx, tx, partial); err != nil {
		w.last = nil
		return 0, fmt.Errorf("write table %s: %w", Table, err)
	}
	w.last = want
	return tx.NumOperations(), nil
}

// run writes tx: a partial sync over nfnetlink when it can, the rest
// through nft. Netlink refuses what it cannot encode before it sends
// anything, so falling back writes the transaction once.
func (w *Writer) run(ctx context.Context, tx *nftbatch.Transaction, partial bool) error {
	w.viaNetlink = false
	if partial && w.Netlink != nil {
		err := w.Netlink.Run(ctx, tx)
		if !errors.Is(err, nftbatch.ErrUnsupported) {
			w.viaNetlink = true
			return err
		}
	}
	return nftbatch.Exec{NFT: w.NFT}.Run(ctx, tx)
}

// diff is the transaction that turns the table, holding old, into want:
// new objects, changed chains rewritten, elements added and removed one by
// one, and what went deleted once nothing refers to it.
func (w *Writer) diff(old, want *Objects) *nftbatch.Transaction {
	tx := nftbatch.NewTransaction(Family, Table)
	for _, n := range sorted(want.Counters) {
		if old.Counters[n] == nil {
			tx.Add(want.Counters[n])
		}
	}
	for _, n := range sorted(want.Sets) {
		if old.Sets[n] == nil {
			tx.Add(want.Sets[n])
		}
	}
	for _, n := range sorted(want.Maps) {
		if old.Maps[n] == nil {
			tx.Add(want.Maps[n])
		}
	}
	for _, n := range sorted(want.Chains) {
		if old.Chains[n] == nil {
			tx.Add(want.Chains[n])
		}
	}
	// Elements that go, before the chains their verdicts jump to.
	for _, n := range sorted(old.Elements) {
		if want.Sets[n] == nil && want.Maps[n] == nil {
			continue // the whole set goes
		}
		if sameElements(old.Elements[n], want.Elements[n]) {
			continue
		}
		keep := elementKeys(want.Elements[n])
		for _, e := range old.Elements[n] {
			if !keep[elementKey(e)] {
				tx.Delete(&knftables.Element{Set: e.Set, Map: e.Map, Key: e.Key})
			}
		}
	}
	changed := map[string]bool{}
	for _, n := range sorted(want.Chains) {
		if old.Chains[n] == nil || !sameRules(old.Rules[n], want.Rules[n]) {
			changed[n] = true
			if old.Chains[n] != nil {
				tx.Flush(want.Chains[n])
			}
		}
	}
	for _, n := range sorted(old.Chains) {
		if want.Chains[n] == nil {
			tx.Flush(old.Chains[n])
		}
	}
	for _, n := range sorted(want.Elements) {
		if sameElements(old.Elements[n], want.Elements[n]) {
			continue
		}
		had := elementKeys(old.Elements[n])
		for _, e := range want.Elements[n] {
			if !had[elementKey(e)] {
				tx.Add(e)
			}
		}
	}
	for _, n := range sorted(want.Rules) {
		if changed[n] {
			for _, r := range want.Rules[n] {
				tx.Add(r)
			}
		}
	}
	for _, n := range sorted(old.Chains) {
		if want.Chains[n] == nil {
			tx.Delete(&knftables.Chain{Name: n})
		}
	}
	for _, n := range sorted(old.Maps) {
		if want.Maps[n] == nil {
			tx.Delete(&knftables.Map{Name: n})
		}
	}
	for _, n := range sorted(old.Sets) {
		if want.Sets[n] == nil {
			tx.Delete(&knftables.Set{Name: n})
		}
	}
	for _, n := range sorted(old.Counters) {
		if want.Counters[n] == nil {
			tx.Delete(&knftables.Counter{Name: n})
		}
	}
	return tx
}

// elementKey identifies an element with its value: a map element whose
// verdict changes is deleted and added again.
func elementKey(e *knftables.Element) string {
	return strings.Join(e.Key, " . ") + " : " + strings.Join(e.Value, " ")
}

// sameElements says whether a and b hold the same elements in the same
// order, as Render writes an unchanged set: most sets of a sync are, and
// this spares their keys' strings.
func sameElements(a, b []*knftables.Element) bool {
	return slices.EqualFunc(a, b, func(x, y *knftables.Element) bool {
		return slices.Equal(x.Key, y.Key) && slices.Equal(x.Value, y.Value)
	})
}

func elementKeys(es []*knftables.Element) map[string]bool {
	out := make(map[string]bool, len(es))
	for _, e := range es {
		out[elementKey(e)] = true
	}
	return out
}

func sameRules(a, b []*knftables.Rule) bool {
	return slices.EqualFunc(a, b, func(x, y *knftables.Rule) bool { return x.Rule == y.Rule })
}

// Check says whether the kernel would take want, writing nothing.
func (w *Writer) Check(ctx context.Context, want *Objects) error {
	tx, err := w.transaction(ctx, want)
	if err != nil {
		return err
	}
	ktx := w.NFT.NewTransaction()
	tx.Knftables(ktx)
	return w.NFT.Check(ctx, ktx)
}

// transaction is what turns the table as it is into want.
func (w *Writer) transaction(ctx context.Context, want *Objects) (*nftbatch.Transaction, error) {
	live, err := w.live(ctx)
	if err != nil {
		return nil, err
	}
	tx := nftbatch.NewTransaction(Family, Table)
	tx.Add(&knftables.Table{Comment: ptr.To("NetworkPolicy enforcement: trireme-netpol")})
	for _, n := range sorted(want.Chains) {
		tx.Add(want.Chains[n])
		tx.Flush(want.Chains[n])
	}
	for _, n := range live.chains {
		if want.Chains[n] == nil {
			tx.Flush(&knftables.Chain{Name: n})
		}
	}
	for _, n := range sorted(want.Maps) {
		tx.Add(want.Maps[n])
		tx.Flush(want.Maps[n])
	}
	for _, n := range sorted(want.Sets) {
		tx.Add(want.Sets[n])
		tx.Flush(want.Sets[n])
	}
	for _, n := range sorted(want.Counters) {
		tx.Add(want.Counters[n])
	}
	for _, n := range sorted(want.Elements) {
		for _, e := range want.Elements[n] {
			tx.Add(e)
		}
	}
	for _, n := range sorted(want.Rules) {
		for _, r := range want.Rules[n] {
			tx.Add(r)
		}
	}
	for _, n := range live.chains {
		if want.Chains[n] == nil {
			tx.Delete(&knftables.Chain{Name: n})
		}
	}
	for _, n := range live.maps {
		if want.Maps[n] == nil {
			tx.Delete(&knftables.Map{Name: n})
		}
	}
	for _, n := range live.sets {
		if want.Sets[n] == nil {
			tx.Delete(&knftables.Set{Name: n})
		}
	}
	for _, n := range live.counters {
		if want.Counters[n] == nil {
			tx.Delete(&knftables.Counter{Name: n})
		}
	}
	return tx, nil
}

// Cleanup removes the table, if there is one.
func (w *Writer) Cleanup(ctx context.Context) error {
	tx := w.NFT.NewTransaction()
	tx.Add(&knftables.Table{})
	tx.Delete(&knftables.Table{})
	if err := w.NFT.Run(ctx, tx); err != nil {
		return fmt.Errorf("delete table %s: %w", Table, err)
	}
	return nil
}

// Counters returns the table's named counters' packet counts.
func (w *Writer) Counters(ctx context.Context) (map[string]uint64, error) {
	list, err := w.NFT.ListCounters(ctx)
	if err != nil {
		if knftables.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list counters: %w", err)
	}
	out := make(map[string]uint64, len(list))
	for _, c := range list {
		if c.Packets != nil {
			out[c.Name] = *c.Packets
		}
	}
	return out, nil
}

type liveObjects struct {
	chains, sets, maps, counters []string
}

// live lists what the table holds now (one nft list, without set
// elements); nothing when there is no table.
func (w *Writer) live(ctx context.Context) (liveObjects, error) {
	all, err := w.NFT.ListAll(ctx)
	if err != nil {
		if knftables.IsNotFound(err) {
			return liveObjects{}, nil
		}
		return liveObjects{}, fmt.Errorf("list table %s: %w", Table, err)
	}
	return liveObjects{chains: all["chain"], sets: all["set"], maps: all["map"], counters: all["counter"]}, nil
}

func sorted[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
