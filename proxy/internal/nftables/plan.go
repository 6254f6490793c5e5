package nftables

import (
	"maps"
	"net/netip"
	"slices"
	"strings"
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/knftables"

	"trireme.dev/componentbase/nftbatch"
	"trireme.dev/proxy/internal/backend"
	"trireme.dev/proxy/internal/model"
)

// Plan computes the transaction a sync runs, and a commit function to call
// once it ran, which records the new state and returns the number of rules
// and elements held. stale lists "chain NAME", "set NAME" and "map NAME"
// entries that exist in the kernel (full syncs only).
//
// A full plan needs nothing of what the back end remembers, and drops it
// at once, so that a full sync never holds the old state and the new
// together: if the transaction then fails, the back end is unsynced, as
// after any failed sync, and the next sync is full again. Starting from
// that empty state, the incremental steps below have nothing old to undo
// and write every element anew.
func (p *Proxier) Plan(req backend.Request, full bool, stale []string) (*nftbatch.Transaction, func() int) {
	if full {
		p.reset()
		p.old = nil
	} else {
		p.old = p.pieces
	}
	pl := &plan{p: p, req: req, full: full, tx: p.newTransaction()}
	pl.names, pl.pieces = backend.Render(req, full, p.render)
	pl.shareElements()
	pl.countHairpins()
	if full {
		p.addBase(pl.tx, req.NodePortIPs)
	} else {
		pl.writeNodePortIPs()
		pl.writeRemovals()
	}
	pl.writeEndpointMaps()
	pl.writeChainsAndSets()
	pl.writeRules()
	pl.writeElements()
	pl.writeDeletions(stale)
	return pl.tx, pl.commit
}

// plan is one sync's work: the ports it rebuilds, their new pieces, and
// what those change in the elements, hairpin counts and endpoints maps the
// ports share. Its steps run in the order Plan calls them.
type plan struct {
	p    *Proxier
	req  backend.Request
	full bool
	tx   *nftbatch.Transaction

	// names are the ports rebuilt, sorted; pieces their new pieces, nil
	// for a port that is gone.
	names  []model.ServicePortName
	pieces map[model.ServicePortName]*piece
	// owners are the new owners of the shared elements touched.
	owners  map[elemKey][]owner
	touched map[elemKey]bool
	// hairpinDelta is the change of each hairpin IP's reference count;
	// hairpinIPs its keys, sorted.
	hairpinDelta map[netip.Addr]int32
	hairpinIPs   []netip.Addr
	// newBuckets are the endpoints maps to create.
	newBuckets map[string]bool
}

// shareElements moves the rebuilt ports' shared elements from their old
// pieces to their new ones in the owners bookkeeping.
func (pl *plan) shareElements() {
	pl.owners = map[elemKey][]owner{}
	pl.touched = map[elemKey]bool{}
	ownersOf := func(k elemKey) []owner {
		if o, ok := pl.owners[k]; ok {
			return o
		}
		return slices.Clone(pl.p.owners[k])
	}
	for _, n := range pl.names {
		if old := pl.p.pieces[n]; old != nil {
			for _, e := range old.elems {
				k := elemKey{e.set, e.key}
				pl.owners[k] = slices.DeleteFunc(ownersOf(k), func(x owner) bool { return x.name == n })
				pl.touched[k] = true
			}
		}
		if np := pl.pieces[n]; np != nil {
			for _, e := range np.elems {
				k := elemKey{e.set, e.key}
				pl.owners[k] = append(ownersOf(k), owner{n, e.value})
				pl.touched[k] = true
			}
		}
	}
}

// want is the value the kernel should hold for a shared element: the first
// owner's by name, so that every node and every sync resolve two Services
// claiming one element the same way.
func (pl *plan) want(k elemKey) (string, bool) {
	o := pl.owners[k]
	if len(o) == 0 {
		return "", false
	}
	return slices.MinFunc(o, func(a, b owner) int { return model.Compare(a.name, b.name) }).value, true
}

// countHairpins changes the hairpin set's reference counts per IP by the
// ports rebuilt.
func (pl *plan) countHairpins() {
	pl.hairpinDelta = map[netip.Addr]int32{}
	for _, n := range pl.names {
		if old := pl.p.pieces[n]; old != nil {
			for _, ip := range old.hairpin {
				pl.hairpinDelta[ip]--
			}
		}
		if np := pl.pieces[n]; np != nil {
			for _, ip := range np.hairpin {
				pl.hairpinDelta[ip]++
			}
		}
	}
	pl.hairpinIPs = slices.SortedFunc(maps.Keys(pl.hairpinDelta), netip.Addr.Compare)
}

// writeNodePortIPs refills the NodePort addresses' set when they changed.
func (pl *plan) writeNodePortIPs() {
	ips := pl.req.NodePortIPs
	if ips == nil || slices.Equal(pl.p.nodeIPs, ips) {
		return
	}
	pl.tx.Flush(&knftables.Set{Name: setNodePortIPs})
	for _, ip := range ips {
		pl.tx.Add(&knftables.Element{Set: setNodePortIPs, Key: []string{ip.String()}})
	}
}

// writeRemovals deletes the elements that go or change, first: a chain can
// only go once no element jumps to it.
func (pl *plan) writeRemovals() {
	for _, k := range sortedKeys(pl.touched) {
		old, had := pl.p.written[k]
		if v, ok := pl.want(k); had && (!ok || v != old) {
			pl.p.delElem(pl.tx, k, old)
		}
	}
	for _, ip := range pl.hairpinIPs {
		if before := pl.p.hairpinRefs[ip]; before > 0 && before+pl.hairpinDelta[ip] <= 0 {
			pl.tx.DeleteAddrPair(setHairpin, ip)
		}
	}
	for _, n := range pl.names {
		if old := pl.p.pieces[n]; old != nil {
			for _, e := range changedPrivate(old, pl.pieces[n]) {
				pl.tx.DeleteEndpoint(e.set, e.key)
			}
		}
	}
}

// writeEndpointMaps creates the endpoints maps the new pieces use, before
// the rules that use them.
func (pl *plan) writeEndpointMaps() {
	pl.newBuckets = map[string]bool{}
	for _, n := range pl.names {
		if np := pl.pieces[n]; np != nil {
			for _, r := range np.ranges {
				if !pl.p.buckets[r.bucket] {
					pl.newBuckets[r.bucket] = true
				}
			}
		}
	}
	for _, b := range slices.Sorted(maps.Keys(pl.newBuckets)) {
		proto := strings.Split(b, "-")[2]
		pl.tx.Add(&knftables.Map{Name: b, TypeOf: "numgen random mod 1 : " + pl.p.ip + " daddr . " + proto + " dport"})
		pl.tx.Flush(&knftables.Map{Name: b})
	}
}

// sameChain reports whether port n's chain c is unchanged from its old
// piece, so that it is left as it is.
func (pl *plan) sameChain(n model.ServicePortName, c string) bool {
	old := pl.p.pieces[n]
	return old != nil && slices.Equal(old.chains[c], pl.pieces[n].chains[c])
}

// writeChainsAndSets creates (or empties) the chains that changed and the
// affinity sets that are new, all of them before any rule, which may jump
// to another port's chain.
func (pl *plan) writeChainsAndSets() {
	for _, n := range pl.names {
		np := pl.pieces[n]
		if np == nil {
			continue
		}
		for _, c := range slices.Sorted(maps.Keys(np.chains)) {
			if !pl.sameChain(n, c) {
				pl.tx.Add(&knftables.Chain{Name: c})
				pl.tx.Flush(&knftables.Chain{Name: c})
			}
		}
		old := pl.p.pieces[n]
		for _, s := range slices.Sorted(maps.Keys(np.sets)) {
			if old != nil {
				if _, ok := old.sets[s]; ok {
					continue
				}
			}
			pl.tx.Add(&knftables.Set{Name: s, Type: pl.p.addrType, Flags: []knftables.SetFlag{knftables.DynamicFlag, knftables.TimeoutFlag},
				Timeout: ptr.To(time.Duration(np.sets[s]) * time.Second)})
		}
	}
}

// writeRules fills the chains that changed.
func (pl *plan) writeRules() {
	for _, n := range pl.names {
		np := pl.pieces[n]
		if np == nil {
			continue
		}
		for _, c := range slices.Sorted(maps.Keys(np.chains)) {
			if pl.sameChain(n, c) {
				continue
			}
			for _, r := range np.chains[c] {
				pl.tx.Add(&knftables.Rule{Chain: c, Rule: r})
			}
		}
	}
}

// writeElements adds the shared elements, endpoints and hairpin pairs that
// are new or changed.
func (pl *plan) writeElements() {
	for _, k := range sortedKeys(pl.touched) {
		old, had := pl.p.written[k]
		if v, ok := pl.want(k); ok && (!had || v != old) {
			pl.p.addElem(pl.tx, k, v)
		}
	}
	for _, n := range pl.names {
		if np := pl.pieces[n]; np != nil {
			for _, e := range changedPrivate(np, pl.p.pieces[n]) {
				pl.tx.AddEndpoint(e.set, e.key, e.ep)
			}
		}
	}
	for _, ip := range pl.hairpinIPs {
		if before := pl.p.hairpinRefs[ip]; before <= 0 && before+pl.hairpinDelta[ip] > 0 {
			pl.tx.AddAddrPair(setHairpin, ip)
		}
	}
}

// writeDeletions deletes the chains and sets the rebuilt ports no longer
// have and, on a full sync, the chains, sets and endpoints maps of ours
// in the kernel (stale) that the new rules do not use.
func (pl *plan) writeDeletions(stale []string) {
	var chains, sets, bucketMaps []string
	for _, n := range pl.names {
		old := pl.p.pieces[n]
		if old == nil {
			continue
		}
		np := pl.pieces[n]
		for _, c := range slices.Sorted(maps.Keys(old.chains)) {
			if np == nil || np.chains[c] == nil {
				chains = append(chains, c)
			}
		}
		for _, s := range slices.Sorted(maps.Keys(old.sets)) {
			if _, ok := np.setsOrNil()[s]; !ok {
				sets = append(sets, s)
			}
		}
	}
	wantChains, wantSets := map[string]bool{}, map[string]bool{}
	for _, np := range pl.pieces {
		for c := range np.chainsOrNil() {
			wantChains[c] = true
		}
		for s := range np.setsOrNil() {
			wantSets[s] = true
		}
	}
	for _, s := range stale {
		kind, name, _ := strings.Cut(s, " ")
		switch {
		case kind == "chain" && !wantChains[name] && !baseChains[name]:
			chains = append(chains, name)
		case kind == "set" && !wantSets[name] && name != setHairpin && name != setNodePortIPs && name != setClusterIPs:
			sets = append(sets, name)
		case kind == "map" && !pl.newBuckets[name] && strings.HasPrefix(name, mapEndpoints+"-"):
			bucketMaps = append(bucketMaps, name)
		}
	}
	for _, c := range chains {
		pl.tx.Flush(&knftables.Chain{Name: c})
	}
	for _, c := range chains {
		pl.tx.Delete(&knftables.Chain{Name: c})
	}
	for _, s := range sets {
		pl.tx.Delete(&knftables.Set{Name: s})
	}
	for _, m := range bucketMaps {
		pl.tx.Delete(&knftables.Map{Name: m})
	}
}

// commit records the plan as the back end's state once its transaction
// ran, and returns the number of rules and elements held.
func (pl *plan) commit() int {
	p := pl.p
	if pl.full {
		p.synced = true
	}
	for b := range pl.newBuckets {
		p.buckets[b] = true
	}
	for _, n := range pl.names {
		if np := pl.pieces[n]; np != nil {
			p.pieces[n] = np
		} else {
			delete(p.pieces, n)
		}
	}
	for k, o := range pl.owners {
		if len(o) == 0 {
			delete(p.owners, k)
		} else {
			p.owners[k] = o
		}
	}
	for k := range pl.touched {
		if v, ok := pl.want(k); ok {
			p.written[k] = v
		} else {
			delete(p.written, k)
		}
	}
	p.nodeIPs = slices.Clone(pl.req.NodePortIPs)
	for _, ip := range pl.hairpinIPs {
		if c := p.hairpinRefs[ip] + pl.hairpinDelta[ip]; c > 0 {
			p.hairpinRefs[ip] = c
		} else {
			delete(p.hairpinRefs, ip)
		}
	}
	count := len(p.written) + len(p.hairpinRefs)
	for _, pc := range p.pieces {
		count += len(pc.private)
		for _, rules := range pc.chains {
			count += len(rules)
		}
	}
	return count
}

// chainsOrNil and setsOrNil are a piece's chains and sets, none for a
// port that is gone.
func (pc *piece) chainsOrNil() map[string][]string {
	if pc == nil {
		return nil
	}
	return pc.chains
}

func (pc *piece) setsOrNil() map[string]int32 {
	if pc == nil {
		return nil
	}
	return pc.sets
}
