package iptables

import (
	"context"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"trireme.dev/proxy/internal/backend"
	"trireme.dev/proxy/internal/model"
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

// recorder is an Executor that records what it is asked to do, with
// iptables-save showing the chains named in earlier restores.
type recorder struct {
	log    []string
	chains map[string]bool
}

func (r *recorder) Restore(_ context.Context, data []byte) error {
	r.log = append(r.log, "iptables-restore --noflush <<\n"+string(data))
	for _, l := range strings.Split(string(data), "\n") {
		if c, ok := strings.CutPrefix(l, ":"); ok {
			c, _, _ = strings.Cut(c, " ")
			r.chains[c] = true
		}
		if c, ok := strings.CutPrefix(l, "-X "); ok {
			delete(r.chains, c)
		}
	}
	return nil
}

func (r *recorder) Save(_ context.Context, table string) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%s\n", table)
	for c := range r.chains {
		fmt.Fprintf(&b, ":%s - [0:0]\n", c)
	}
	return []byte(b.String()), nil
}

func (r *recorder) Run(_ context.Context, args ...string) error {
	r.log = append(r.log, "iptables "+strings.Join(args, " "))
	if len(args) > 2 && args[2] == "-C" {
		return fmt.Errorf("no such rule")
	}
	return nil
}

// TestGoldenDualStack renders each family's part of a dual-stack model
// as iptables-restore and ip6tables-restore input, as a dual-stack
// proxy's two back ends write it.
func TestGoldenDualStack(t *testing.T) {
	for _, tt := range []struct {
		fam    model.Family
		golden string
	}{{model.IPv4, "dualstack-ipv4.txt"}, {model.IPv6, "dualstack-ipv6.txt"}} {
		t.Run(tt.fam.String(), func(t *testing.T) {
			rec := &recorder{chains: map[string]bool{}}
			p := New(Config{Family: tt.fam, ClusterCIDR: modeltest.DualStackCIDR[tt.fam], MasqueradeBit: 14}, rec)
			if _, err := p.Sync(context.Background(), backend.Request{State: modeltest.DualStack(tt.fam), Full: true, NodePortIPs: modeltest.DualStackNodeIPs[tt.fam]}); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, strings.Join(rec.log, "\n"))
		})
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
			rec := &recorder{chains: map[string]bool{}}
			p := New(tt.cfg, rec)
			state := modeltest.State()
			if _, err := p.Sync(ctx, backend.Request{State: state, Full: true, NodePortIPs: tt.npIP}); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name+"-full.txt", strings.Join(rec.log, "\n"))
			rec.log = nil
			changed := modeltest.Change(state)
			if _, err := p.Sync(ctx, backend.Request{State: state, Changed: changed, NodePortIPs: tt.npIP}); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name+"-partial.txt", strings.Join(rec.log, "\n"))
		})
	}
}
