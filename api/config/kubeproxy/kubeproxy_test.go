package kubeproxy

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	"k8s.io/utils/ptr"
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
			if cfg.Mode != ModeDefault {
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
			if cfg.Mode != ModeNFTables {
				t.Errorf("mode = %q", cfg.Mode)
			}
			if cfg.HealthzBindAddress != "127.0.0.1:10256" {
				t.Errorf("healthzBindAddress = %q", cfg.HealthzBindAddress)
			}
			_, _, minSync := ActiveSync(cfg)
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
			cfg, err := Decode([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if errs := Validate(cfg); len(errs) > 0 {
				t.Fatalf("defaulted config invalid: %v", errs)
			}
			tt.check(t, cfg)
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(cfg *kubeproxyv1alpha1.KubeProxyConfiguration)
		want   string // substring of the first error's field; "" for valid
	}{
		{"defaults are valid", func(*kubeproxyv1alpha1.KubeProxyConfiguration) {}, ""},
		{"iptables mode", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) { c.Mode = ModeIPTables }, ""},
		{"ipvs unsupported", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) { c.Mode = ModeIPVS }, "mode"},
		{"unknown mode", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) { c.Mode = "userspace" }, "mode"},
		{"masquerade bit too big", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) { c.NFTables.MasqueradeBit = ptr.To[int32](32) }, "nftables.masqueradeBit"},
		{"min sync above sync", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) {
			c.IPTables.MinSyncPeriod = metav1.Duration{Duration: time.Hour}
		}, "iptables.minSyncPeriod"},
		{"negative sync", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) {
			c.NFTables.SyncPeriod = metav1.Duration{Duration: -time.Second}
		}, "nftables.syncPeriod"},
		{"bad bind address", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) { c.BindAddress = "nope" }, "bindAddress"},
		{"bad healthz address", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) { c.HealthzBindAddress = "1.2.3.4:http" }, "healthzBindAddress"},
		{"metrics disabled", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) { c.MetricsBindAddress = "" }, ""},
		{"dual-stack cluster CIDR", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) { c.ClusterCIDR = "10.0.0.0/8,fd00::/64" }, ""},
		{"two IPv4 cluster CIDRs", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) { c.ClusterCIDR = "10.0.0.0/8,11.0.0.0/8" }, "clusterCIDR"},
		{"bad cluster CIDR", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) { c.ClusterCIDR = "10.0.0.0" }, "clusterCIDR"},
		{"nodeport addresses", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) {
			c.NodePortAddresses = []string{"10.0.0.0/8", "127.0.0.1/32"}
		}, ""},
		{"nodeport primary", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) { c.NodePortAddresses = []string{"primary"} }, ""},
		{"nodeport primary with others", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) {
			c.NodePortAddresses = []string{"primary", "10.0.0.0/8"}
		}, "nodePortAddresses"},
		{"bad nodeport address", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) { c.NodePortAddresses = []string{"10.0.0.1"} }, "nodePortAddresses"},
		{"oom score out of range", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) { c.OOMScoreAdj = ptr.To[int32](2000) }, "oomScoreAdj"},
		{"negative qps", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) { c.ClientConnection.QPS = -1 }, "qps"},
		{"unsupported detect-local mode", func(c *kubeproxyv1alpha1.KubeProxyConfiguration) { c.DetectLocalMode = "BridgeInterface" }, "detectLocalMode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Default()
			tt.mutate(cfg)
			errs := Validate(cfg)
			if tt.want == "" {
				if len(errs) != 0 {
					t.Fatalf("unexpected errors: %v", errs)
				}
				return
			}
			if len(errs) == 0 || !strings.Contains(errs[0].Field, tt.want) {
				t.Fatalf("errors = %v, want one on %q", errs, tt.want)
			}
		})
	}
}
