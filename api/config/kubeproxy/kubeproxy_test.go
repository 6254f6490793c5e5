package kubeproxy

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	"k8s.io/utils/ptr"
)

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
