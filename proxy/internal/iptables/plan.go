package iptables

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"trireme.dev/proxy/internal/backend"
	"trireme.dev/proxy/internal/model"
)

// Plan renders the iptables-restore input of a sync, its number of rule
// lines, and a commit function to call once it was applied, which records
// the new state and returns the number of rules held. existing lists the
// TRIREME- chains per table (full syncs only), so stale ones are deleted.
//
// A full plan needs nothing of what the back end remembers, and drops it
// at once, so that a full sync never holds the old state and the new
// together: if iptables-restore then fails, the back end is unsynced, as
// after any failed sync, and the next sync is full again.
//
// iptables-restore wants every chain declared before any rule jumps to
// it, so each section's declarations and rules are gathered apart. The
// nat table goes in several sections (each its own COMMIT) of at most
// maxChainsPerCommit Service chains: Debian's iptables-restore (the
// nft-backed one) keeps the names of the chains a section names in a
// sorted list, which it walks for every line, so one section of 10,000
// Services costs rules times chains (some 35 s of CPU for 220,000 rules;
// in sections of 200 chains about 4 s). Each section holds whole
// Services, and the last one the fixed chains that jump to them and the
// deletions, so every section leaves each Service with either its old
// rules or its new ones, and no jump to a chain that does not exist.
func (p *Proxier) Plan(req backend.Request, full bool, existing map[string][]string) ([]byte, int, func() int) {
	if full {
		p.reset()
	} else {
		existing = nil
	}
	pl := &plan{p: p, req: req, full: full}
	pl.names, pl.pieces = backend.Render(req, full, p.render)
	pl.fixedChains()
	pl.writeFixedChains()
	for _, c := range existing[tableFilter] {
		if !isFixed(c) {
			pl.filter.delete(c)
		}
	}
	pl.out = bytes.NewBuffer(make([]byte, 0, pl.size()))
	pl.emit(tableFilter, &pl.filter)
	pl.writeServiceChains(existing[tableNAT])
	return pl.out.Bytes(), pl.lines, pl.commit
}

// section is one COMMIT of an iptables-restore input: chain declarations,
// then rules, then deletions.
type section struct {
	decl, rules, deletes bytes.Buffer
	chains               int
}

// delete declares chain c, so that it exists, and deletes it.
func (s *section) delete(c string) {
	fmt.Fprintf(&s.decl, ":%s - [0:0]\n", c)
	fmt.Fprintf(&s.deletes, "-X %s\n", c)
	s.chains++
}

// plan is one sync's work; its steps run in the order Plan calls them.
type plan struct {
	p    *Proxier
	req  backend.Request
	full bool

	// names are the ports rebuilt, sorted; pieces their new pieces, nil
	// for a port that is gone.
	names  []model.ServicePortName
	pieces map[model.ServicePortName]*piece
	// fixed is the content of each fixed chain, keyed "table chain", and
	// written what the kernel holds of them once the plan is applied.
	fixed   map[string][]string
	written map[string]string

	filter, nat section
	lines       int
	out         *bytes.Buffer
}

func fixedKey(table, chain string) string { return table + " " + chain }

// fixedChains computes the fixed chains' content from every port's piece,
// the rebuilt ones' new pieces and the others' old ones, in port order.
func (pl *plan) fixedChains() {
	all := maps.Clone(pl.p.pieces)
	for n, pc := range pl.pieces {
		if pc == nil {
			delete(all, n)
		} else {
			all[n] = pc
		}
	}
	natSvc, natNP := fixedKey(tableNAT, chServices), fixedKey(tableNAT, chNodePorts)
	fSvc, fExt := fixedKey(tableFilter, chServices), fixedKey(tableFilter, chExtServices)
	fixed := map[string][]string{}
	for _, n := range slices.SortedFunc(maps.Keys(all), model.Compare) {
		pc := all[n]
		fixed[natSvc] = append(fixed[natSvc], pc.services...)
		fixed[natNP] = append(fixed[natNP], pc.nodePorts...)
		fixed[fSvc] = append(fixed[fSvc], pc.filterServices...)
		fixed[fExt] = append(fixed[fExt], pc.filterExtern...)
	}
	if pl.req.NodePortIPs == nil {
		fixed[natSvc] = append(fixed[natSvc], "-A "+chServices+" -m addrtype --dst-type LOCAL -j "+chNodePorts)
	} else {
		for _, ip := range pl.req.NodePortIPs {
			fixed[natSvc] = append(fixed[natSvc], "-A "+chServices+" -d "+ip.String()+pl.p.host+" -j "+chNodePorts)
		}
	}
	mark := pl.p.mark
	fixed[fixedKey(tableNAT, chPostrouting)] = []string{
		"-A " + chPostrouting + " -m mark ! --mark " + mark + "/" + mark + " -j RETURN",
		"-A " + chPostrouting + " -j MARK --xor-mark " + mark,
		"-A " + chPostrouting + " -j MASQUERADE --random-fully",
	}
	fixed[fixedKey(tableNAT, chMarkMasq)] = []string{"-A " + chMarkMasq + " -j MARK --or-mark " + mark}
	pl.fixed = fixed
}

// writeChain declares chain name in s and fills it with rules.
func (pl *plan) writeChain(s *section, name string, rules []string) {
	fmt.Fprintf(&s.decl, ":%s - [0:0]\n", name)
	for _, r := range rules {
		s.rules.WriteString(r)
		s.rules.WriteByte('\n')
	}
	s.chains++
	pl.lines += len(rules)
}

// sectionOf is the section a fixed chain's table goes to.
func (pl *plan) sectionOf(table string) *section {
	if table == tableFilter {
		return &pl.filter
	}
	return &pl.nat
}

// writeFixedChains writes the fixed chains whose content changed (every
// one on a full sync), and the dispatch chains empty when no port fills
// them: they must exist for the jumps into them.
func (pl *plan) writeFixedChains() {
	pl.written = map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(pl.fixed)) {
		content := strings.Join(pl.fixed[k], "\n")
		pl.written[k] = content
		if !pl.full && pl.p.written[k] == content {
			continue
		}
		t, c, _ := strings.Cut(k, " ")
		pl.writeChain(pl.sectionOf(t), c, pl.fixed[k])
	}
	for _, k := range []string{fixedKey(tableFilter, chServices), fixedKey(tableFilter, chExtServices), fixedKey(tableNAT, chServices), fixedKey(tableNAT, chNodePorts)} {
		if _, ok := pl.fixed[k]; ok {
			continue
		}
		pl.written[k] = ""
		if pl.full || pl.p.written[k] != "" {
			t, c, _ := strings.Cut(k, " ")
			pl.writeChain(pl.sectionOf(t), c, nil)
		}
	}
}

// size estimates the input's length, so that it is sized once rather than
// grown by copies: the input is written as its sections are complete, and
// at most one section is held besides it.
func (pl *plan) size() int {
	size := pl.filter.decl.Len() + pl.filter.rules.Len() + pl.filter.deletes.Len() + pl.nat.decl.Len() + pl.nat.rules.Len() + 4096
	for _, np := range pl.pieces {
		if np == nil {
			continue
		}
		for c, rules := range np.chains {
			size += len(c) + 16
			for _, r := range rules {
				size += len(r) + 1
			}
		}
	}
	return size
}

// emit appends section s of table to the input.
func (pl *plan) emit(table string, s *section) {
	fmt.Fprintf(pl.out, "*%s\n", table)
	pl.out.Write(s.decl.Bytes())
	pl.out.Write(s.rules.Bytes())
	pl.out.Write(s.deletes.Bytes())
	pl.out.WriteString("COMMIT\n")
}

// writeServiceChains writes the rebuilt ports' chains that changed, in
// sections of at most maxChainsPerCommit, the last of them with the fixed
// nat chains, then deletes the chains no port wants: those the rebuilt
// ports dropped and, on a full sync, the stale ones of existing.
func (pl *plan) writeServiceChains(existing []string) {
	wanted := map[string]bool{}
	var deletes []string
	group := &section{}
	for _, n := range pl.names {
		np, old := pl.pieces[n], pl.p.pieces[n]
		if np != nil {
			if group.chains >= maxChainsPerCommit {
				pl.emit(tableNAT, group)
				group = &section{}
			}
			for _, c := range slices.Sorted(maps.Keys(np.chains)) {
				wanted[c] = true
				if old != nil && slices.Equal(old.chains[c], np.chains[c]) {
					continue
				}
				pl.writeChain(group, c, np.chains[c])
			}
		}
		if old != nil {
			for _, c := range slices.Sorted(maps.Keys(old.chains)) {
				if np == nil || np.chains[c] == nil {
					deletes = append(deletes, c)
				}
			}
		}
	}
	for _, c := range existing {
		if !wanted[c] && !isFixed(c) {
			deletes = append(deletes, c)
		}
	}
	// A chain being deleted may share its name with one another Service
	// now wants (two ports of one endpoint): keep it then.
	deletes = slices.DeleteFunc(slices.Compact(slices.Sorted(slices.Values(deletes))), func(c string) bool { return wanted[c] })
	// The last group of Service chains shares the section of the fixed
	// chains, and so do the first deletions; more go in sections after.
	// The group's rules go first, while the list of names the section
	// walks does not yet hold every chain the dispatch rules jump to.
	pl.nat.decl.Write(group.decl.Bytes())
	group.rules.Write(pl.nat.rules.Bytes())
	pl.nat.rules = group.rules
	pl.nat.chains += group.chains
	group = &pl.nat
	for _, c := range deletes {
		if group.chains >= maxChainsPerCommit {
			pl.emit(tableNAT, group)
			group = &section{}
		}
		group.delete(c)
	}
	pl.emit(tableNAT, group)
}

// commit records the plan as the back end's state once it was applied,
// and returns the number of rules held.
func (pl *plan) commit() int {
	p := pl.p
	if pl.full {
		p.synced = true
	}
	for n, pc := range pl.pieces {
		if pc == nil {
			delete(p.pieces, n)
		} else {
			p.pieces[n] = pc
		}
	}
	p.written = pl.written
	total := 0
	for _, rules := range pl.fixed {
		total += len(rules)
	}
	for _, pc := range p.pieces {
		for _, r := range pc.chains {
			total += len(r)
		}
	}
	return total
}
