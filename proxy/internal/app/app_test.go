package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"trireme.dev/api/config/kubeproxy"
	"trireme.dev/proxy/internal/options"
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
			o := options.New(nil)
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			var v bool
			bindFlags(fs, o, &v)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			final, err := withConfigFile(o, tt.args)
			if err == nil {
				final.Apply()
				err = final.Validate()
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
