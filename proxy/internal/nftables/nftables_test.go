package nftables

import (
	"context"
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/knftables"

	"trireme.dev/proxy/internal/backend"
	"trireme.dev/proxy/internal/model/modeltest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from what was rendered (run go test -update and review the diff):\n%s", path, got)
	}
}

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
			p := New(tt.cfg, fake)
			state := modeltest.State()
			tx, commit := p.Plan(backend.Request{State: state, Full: true, NodePortIPs: tt.npIP}, true, nil)
			if err := fake.Run(ctx, tx); err != nil {
				t.Fatalf("full sync: %v", err)
			}
			commit()
			golden(t, tt.name+"-full.nft", tx.String())

			changed := modeltest.Change(state)
			tx, commit = p.Plan(backend.Request{State: state, Changed: changed, NodePortIPs: tt.npIP}, false, nil)
			if err := fake.Run(ctx, tx); err != nil {
				t.Fatalf("partial sync: %v\n%s", err, tx)
			}
			commit()
			golden(t, tt.name+"-partial.nft", tx.String())
			golden(t, tt.name+"-after-partial.dump", fake.Dump())

			// A full sync of the changed state must give what the partial
			// one left.
			fresh := knftables.NewFake(knftables.IPv4Family, DefaultTable)
			if _, err := New(tt.cfg, fresh).Sync(ctx, backend.Request{State: state, Full: true, NodePortIPs: tt.npIP}); err != nil {
				t.Fatal(err)
			}
			// The fake dumps elements in insertion order; compare as sets of lines.
			if sortedLines(fresh.Dump()) != sortedLines(fake.Dump()) {
				t.Errorf("partial sync diverged from a full sync:\npartial:\n%s\nfull:\n%s", fake.Dump(), fresh.Dump())
			}
		})
	}
}

func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
