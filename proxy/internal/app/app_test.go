package app

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"trireme.dev/api/config/kubeproxy"
	"trireme.dev/proxy/internal/model"
)

func TestFlagsOverConfig(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "kube-proxy.yaml")
	if err := os.WriteFile(cfgFile, []byte(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
clusterCIDR: 10.244.0.0/16
nftables:
  minSyncPeriod: 2s
`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		args        []string
		wantMode    string
		wantMinSync time.Duration
		wantCIDR    string
		wantErr     string
	}{
		{"defaults: iptables as upstream", nil, "", time.Second, "", ""},
		{"config file", []string{"--config", cfgFile}, "nftables", 2 * time.Second, "10.244.0.0/16", ""},
		{"flags win over the file", []string{"--config", cfgFile, "--min-sync-period", "100ms", "--cluster-cidr", "10.0.0.0/8"}, "nftables", 100 * time.Millisecond, "10.0.0.0/8", ""},
		{"mode flag", []string{"--proxy-mode", "iptables", "--iptables-min-sync-period", "3s"}, "iptables", 3 * time.Second, "", ""},
		{"ipvs refused", []string{"--proxy-mode", "ipvs"}, "", 0, "", "mode"},
		{"missing config file", []string{"--config", filepath.Join(dir, "nope")}, "", 0, "", "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			final, err := spec.Resolve(tt.args)
			if err == nil {
				final.Apply()
				err = errors.Join(final.Validate()...)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, _, minSync := kubeproxy.ActiveSync(final.Config)
			if string(final.Config.Mode) != tt.wantMode || minSync != tt.wantMinSync || final.Config.ClusterCIDR != tt.wantCIDR {
				t.Errorf("mode %q minSync %v cidr %q", final.Config.Mode, minSync, final.Config.ClusterCIDR)
			}
		})
	}
}

func TestFamilies(t *testing.T) {
	v4, v6 := netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("2001:db8::10")
	tests := []struct {
		name        string
		clusterCIDR string
		nodeIPs     []netip.Addr
		want        []model.Family
	}{
		{"nothing: IPv4", "", nil, []model.Family{model.IPv4}},
		{"IPv4 CIDR", "10.244.0.0/16", []netip.Addr{v4}, []model.Family{model.IPv4}},
		{"IPv6 CIDR", "fd00:10:244::/56", nil, []model.Family{model.IPv6}},
		{"IPv6 node, no CIDR", "", []netip.Addr{v6}, []model.Family{model.IPv6}},
		{"dual CIDR, IPv4 first", "10.244.0.0/16,fd00:10:244::/56", nil, []model.Family{model.IPv4, model.IPv6}},
		{"dual CIDR, IPv6 first", "fd00:10:244::/56, 10.244.0.0/16", []netip.Addr{v4}, []model.Family{model.IPv6, model.IPv4}},
		{"IPv4 CIDR, dual-stack node", "10.244.0.0/16", []netip.Addr{v6, v4}, []model.Family{model.IPv4, model.IPv6}},
		{"dual-stack node, no CIDR", "", []netip.Addr{v6, v4}, []model.Family{model.IPv6, model.IPv4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := families(tt.clusterCIDR, tt.nodeIPs); !slices.Equal(got, tt.want) {
				t.Errorf("families = %v, want %v", got, tt.want)
			}
		})
	}
	for _, tt := range []struct {
		fam  model.Family
		want string
	}{{model.IPv4, "10.244.0.0/16"}, {model.IPv6, "fd00:10:244::/56"}} {
		if got := clusterCIDRs("10.244.1.1/16,fd00:10:244::/56", tt.fam); got.String() != tt.want {
			t.Errorf("clusterCIDR of %v = %v, want %v", tt.fam, got, tt.want)
		}
	}
}
