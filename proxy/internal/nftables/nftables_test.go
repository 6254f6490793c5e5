package nftables

import (
	"context"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"trireme.dev/componentbase/golden"
	"trireme.dev/componentbase/nftbatch"

	"sigs.k8s.io/knftables"

	"trireme.dev/proxy/internal/backend"
	"trireme.dev/proxy/internal/model"
	"trireme.dev/proxy/internal/model/modeltest"
)

func TestGolden(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		npIP []netip.Addr
	}{
		{"cluster-cidr", Config{ClusterCIDR: netip.MustParsePrefix("10.244.0.0/16"), MasqueradeBit: 14}, nil},
		{"nodeport-addresses", Config{MasqueradeBit: 14}, []netip.Addr{netip.MustParseAddr("192.168.1.10")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			fake := knftables.NewFake(knftables.IPv4Family, DefaultTable)
			p := New(tt.cfg, nftbatch.Exec{NFT: fake})
			state := modeltest.State()
			tx, commit := p.Plan(backend.Request{State: state, Full: true, NodePortIPs: tt.npIP}, true, nil)
			if err := (nftbatch.Exec{NFT: fake}).Run(ctx, tx); err != nil {
				t.Fatalf("full sync: %v", err)
			}
			commit()
			golden.Check(t, tt.name+"-full.nft", tx.String())

			changed := modeltest.Change(state)
			tx, commit = p.Plan(backend.Request{State: state, Changed: changed, NodePortIPs: tt.npIP}, false, nil)
			if err := (nftbatch.Exec{NFT: fake}).Run(ctx, tx); err != nil {
				t.Fatalf("partial sync: %v\n%s", err, tx)
			}
			commit()
			golden.Check(t, tt.name+"-partial.nft", tx.String())
			golden.Check(t, tt.name+"-after-partial.dump", fake.Dump())

			// A full sync of the changed state must give what the partial
			// one left.
			fresh := knftables.NewFake(knftables.IPv4Family, DefaultTable)
			if _, err := New(tt.cfg, nftbatch.Exec{NFT: fresh}).Sync(ctx, backend.Request{State: state, Full: true, NodePortIPs: tt.npIP}); err != nil {
				t.Fatal(err)
			}
			// The fake dumps elements in insertion order; compare as sets of lines.
			// Endpoint-map keys depend on the history, so compare with
			// each rule's run of keys resolved to the addresses.
			if sortedLines(resolveEndpoints(t, fresh.Dump())) != sortedLines(resolveEndpoints(t, fake.Dump())) {
				t.Errorf("partial sync diverged from a full sync:\npartial:\n%s\nfull:\n%s", fake.Dump(), fresh.Dump())
			}
		})
	}
}

// TestGoldenDualStack renders each family's part of a dual-stack model
// into its own table (ip and ip6), as a dual-stack proxy's two back ends
// do: each holds only its family's addresses and endpoints.
func TestGoldenDualStack(t *testing.T) {
	for _, tt := range []struct {
		fam    model.Family
		kfam   knftables.Family
		golden string
	}{{model.IPv4, knftables.IPv4Family, "dualstack-ipv4.nft"}, {model.IPv6, knftables.IPv6Family, "dualstack-ipv6.nft"}} {
		t.Run(tt.fam.String(), func(t *testing.T) {
			fake := knftables.NewFake(tt.kfam, DefaultTable)
			p := New(Config{Family: tt.fam, ClusterCIDR: modeltest.DualStackCIDR[tt.fam], MasqueradeBit: 14}, nftbatch.Exec{NFT: fake})
			tx, commit := p.Plan(backend.Request{State: modeltest.DualStack(tt.fam), Full: true, NodePortIPs: modeltest.DualStackNodeIPs[tt.fam]}, true, nil)
			if err := (nftbatch.Exec{NFT: fake}).Run(context.Background(), tx); err != nil {
				t.Fatalf("full sync: %v", err)
			}
			commit()
			golden.Check(t, tt.golden, tx.String())
		})
	}
}

// resolveEndpoints replaces "offset B map @service-endpoints-XX" in a dump's
// rules by the addresses the map holds at keys B.., and drops the map's
// elements.
func resolveEndpoints(t *testing.T, dump string) string {
	t.Helper()
	elems := map[string]string{}
	var out []string
	lines := strings.Split(dump, "\n")
	elemRE := regexp.MustCompile(`^add element ip ` + DefaultTable + ` (` + mapEndpoints + `-[a-z]+-..) \{ (\d+) : (.*) \}$`)
	for _, l := range lines {
		if g := elemRE.FindStringSubmatch(l); g != nil {
			n, _ := strconv.Atoi(g[2])
			elems[g[1]+"/"+strconv.Itoa(n)] = g[3]
		}
	}
	re := regexp.MustCompile(`numgen random mod (\d+) offset (\d+) map @(` + mapEndpoints + `-[a-z]+-..)`)
	for _, l := range lines {
		if elemRE.MatchString(l) {
			continue
		}
		out = append(out, re.ReplaceAllStringFunc(l, func(m string) string {
			g := re.FindStringSubmatch(m)
			n, _ := strconv.Atoi(g[1])
			base, _ := strconv.Atoi(g[2])
			var eps []string
			for i := range n {
				eps = append(eps, elems[g[3]+"/"+strconv.Itoa(base+i)])
			}
			return "numgen random mod " + g[1] + " map " + g[3] + " { " + strings.Join(eps, " , ") + " }"
		}))
	}
	return strings.Join(out, "\n")
}

func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
