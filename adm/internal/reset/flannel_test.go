package reset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeCommands answers as a machine on which the commands of present
// succeed (a chain or table that exists) and those of failing fail, and
// records every command.
type fakeCommands struct {
	tools   []string
	present []string
	failing []string
	// outputs are what commands print, by the command line.
	outputs map[string]string
	ran     []string
	// inputs are what RunInput gave each command, in order.
	inputs []string
}

func (f *fakeCommands) Has(name string) bool { return slices.Contains(f.tools, name) }

func (f *fakeCommands) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	cmd := strings.Join(append([]string{name}, args...), " ")
	f.ran = append(f.ran, cmd)
	if slices.Contains(f.failing, cmd) {
		return []byte("Operation not permitted"), errors.New("exit status 1")
	}
	if out, ok := f.outputs[cmd]; ok {
		return []byte(out), nil
	}
	if strings.Contains(cmd, " -S ") || strings.HasPrefix(cmd, "nft list") {
		for _, p := range f.present {
			if strings.Contains(cmd, p) {
				return nil, nil
			}
		}
		return []byte("No chain/target/match by that name."), errors.New("exit status 1")
	}
	if strings.Contains(cmd, " -D ") {
		// One jump rule each; the second deletion finds none.
		if slices.Contains(f.ran[:len(f.ran)-1], cmd) {
			return nil, errors.New("exit status 1")
		}
	}
	return nil, nil
}

func (f *fakeCommands) RunInput(ctx context.Context, input []byte, name string, args ...string) ([]byte, error) {
	f.inputs = append(f.inputs, string(input))
	return f.Run(ctx, name, args...)
}

func TestCleanupFlannel(t *testing.T) {
	dir := t.TempDir()
	subnetFile := filepath.Join(dir, "subnet.env")
	if err := os.WriteFile(subnetFile, []byte("FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_IPV6_NETWORK=fd00:10:244::/56\nFLANNEL_MTU=1450\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		subnetFile string
		cmds       fakeCommands
		want       []string // commands run, in order, after the queries
		notWant    []string
	}{
		{
			name:       "iptables chains and routes",
			subnetFile: subnetFile,
			cmds:       fakeCommands{tools: []string{"iptables", "ip6tables", "nft"}, present: []string{"iptables -w -t nat -S FLANNEL-POSTRTG", "iptables -w -t filter -S FLANNEL-FWD"}},
			want: []string{
				"ip -4 route flush root 10.244.0.0/16",
				"ip -6 route flush root fd00:10:244::/56",
				"iptables -w -t nat -D POSTROUTING -m comment --comment flanneld masq -j FLANNEL-POSTRTG",
				"iptables -w -t nat -F FLANNEL-POSTRTG",
				"iptables -w -t nat -X FLANNEL-POSTRTG",
				"iptables -w -t filter -D FORWARD -m comment --comment flanneld forward -j FLANNEL-FWD",
				"iptables -w -t filter -F FLANNEL-FWD",
				"iptables -w -t filter -X FLANNEL-FWD",
			},
			notWant: []string{"ip6tables -w -t nat -F", "nft delete"},
		},
		{
			name: "nftables tables, no subnet file",
			cmds: fakeCommands{tools: []string{"iptables", "nft"}, present: []string{"nft list table ip flannel-ipv4", "nft list table ip6 flannel-ipv6"}},
			want: []string{
				"nft delete table ip flannel-ipv4",
				"nft delete table ip6 flannel-ipv6",
			},
			notWant: []string{"route flush", "iptables -w -t nat -F"},
		},
		{
			name:    "no tools",
			cmds:    fakeCommands{},
			notWant: []string{"iptables", "nft"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sf := tt.subnetFile
			if sf == "" {
				sf = filepath.Join(dir, "absent")
			}
			if err := cleanupFlannel(context.Background(), &tt.cmds, sf, func(string, ...any) {}); err != nil {
				t.Fatal(err)
			}
			var acted []string
			for _, c := range tt.cmds.ran {
				if !strings.Contains(c, " -S ") && !strings.HasPrefix(c, "nft list") {
					acted = append(acted, c)
				}
			}
			// A jump deletion is retried until it fails: drop the repeats.
			acted = slices.Compact(acted)
			if tt.want != nil && !slices.Equal(acted, tt.want) {
				t.Errorf("ran\n%s\nwant\n%s", strings.Join(acted, "\n"), strings.Join(tt.want, "\n"))
			}
			for _, nw := range tt.notWant {
				for _, c := range acted {
					if strings.Contains(c, nw) {
						t.Errorf("ran %q", c)
					}
				}
			}
		})
	}
}

func TestFlannelNetworks(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("FLANNEL_NETWORK=nonsense\n"), 0o644)
	if _, err := flannelNetworks(bad); err == nil || !strings.Contains(err.Error(), "FLANNEL_NETWORK") {
		t.Errorf("bad network: %v", err)
	}
	if n, err := flannelNetworks(filepath.Join(dir, "absent")); err != nil || n != nil {
		t.Errorf("absent file: %v %v", n, err)
	}
}
