package options

import (
	"strings"
	"testing"
	"time"

	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"

	"trireme.dev/api/config/kubeproxy"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string
		check   func(t *testing.T, cfg *kubeproxyv1alpha1.KubeProxyConfiguration)
	}{{
		name: "empty file is defaulted, mode stays iptables-by-default",
		in:   "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n",
		check: func(t *testing.T, cfg *kubeproxyv1alpha1.KubeProxyConfiguration) {
			if cfg.Mode != kubeproxy.ModeDefault {
				t.Errorf("mode = %q, want empty", cfg.Mode)
			}
			if cfg.HealthzBindAddress != "0.0.0.0:10256" || cfg.MetricsBindAddress != "127.0.0.1:10249" {
				t.Errorf("bind addresses = %q %q", cfg.HealthzBindAddress, cfg.MetricsBindAddress)
			}
			if *cfg.NFTables.MasqueradeBit != 14 || cfg.NFTables.SyncPeriod.Duration != 30*time.Second || cfg.NFTables.MinSyncPeriod.Duration != time.Second {
				t.Errorf("nftables = %+v", cfg.NFTables)
			}
			if cfg.ConfigSyncPeriod.Duration != 15*time.Minute {
				t.Errorf("configSyncPeriod = %v", cfg.ConfigSyncPeriod)
			}
		},
	}, {
		name: "explicit nftables mode and addresses without port",
		in: `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
clusterCIDR: 10.244.0.0/16
healthzBindAddress: 127.0.0.1
nftables:
  minSyncPeriod: 250ms
`,
		check: func(t *testing.T, cfg *kubeproxyv1alpha1.KubeProxyConfiguration) {
			if cfg.Mode != kubeproxy.ModeNFTables {
				t.Errorf("mode = %q", cfg.Mode)
			}
			if cfg.HealthzBindAddress != "127.0.0.1:10256" {
				t.Errorf("healthzBindAddress = %q", cfg.HealthzBindAddress)
			}
			_, _, minSync := kubeproxy.ActiveSync(cfg)
			if minSync != 250*time.Millisecond {
				t.Errorf("minSyncPeriod = %v", minSync)
			}
		},
	}, {
		name:    "unknown field is refused",
		in:      "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmdoe: nftables\n",
		wantErr: "unknown field",
	}, {
		name:    "wrong kind",
		in:      "apiVersion: v1\nkind: ConfigMap\n",
		wantErr: "no kind",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := configKind.Decode([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if errs := kubeproxy.Validate(cfg); len(errs) > 0 {
				t.Fatalf("defaulted config invalid: %v", errs)
			}
			tt.check(t, cfg)
		})
	}
}
