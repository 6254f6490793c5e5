package options

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestNodeDefaults(t *testing.T) {
	cfg := DefaultConfig()
	checks := []struct {
		name string
		ok   bool
	}{
		{"monitor grace 50s", cfg.NodeLifecycleController.NodeMonitorGracePeriod.Duration == 50*time.Second},
		{"monitor period 5s", cfg.NodeLifecycleController.NodeMonitorPeriod.Duration == 5*time.Second},
		{"eviction rate 0.1", cfg.NodeLifecycleController.NodeEvictionRate == 0.1},
		{"unhealthy zone 0.55", cfg.NodeLifecycleController.UnhealthyZoneThreshold == 0.55},
		{"signing duration a year", cfg.CSRSigningController.ClusterSigningDuration.Duration == 365*24*time.Hour},
		{"hpa sync 15s", cfg.HPAController.HorizontalPodAutoscalerSyncPeriod.Duration == 15*time.Second},
		{"hpa downscale window 5m", cfg.HPAController.HorizontalPodAutoscalerDownscaleStabilizationWindow.Duration == 5*time.Minute},
		{"hpa tolerance 0.1", cfg.HPAController.HorizontalPodAutoscalerTolerance == 0.1},
		{"pv binder sync 15s", cfg.PersistentVolumeBinderController.PVClaimBinderSyncPeriod.Duration == 15*time.Second},
		{"cidr allocation off", !cfg.KubeCloudShared.AllocateNodeCIDRs},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if !c.ok {
				t.Error("default wrong")
			}
		})
	}
}

func TestNodeFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(*Options) bool
	}{
		{"cidr flags", []string{"--allocate-node-cidrs", "--cluster-cidr=10.244.0.0/16", "--node-cidr-mask-size=25"}, "",
			func(o *Options) bool {
				return o.Config.KubeCloudShared.AllocateNodeCIDRs && o.Config.NodeIPAMController.NodeCIDRMaskSize == 25
			}},
		{"allocation without a cluster cidr", []string{"--allocate-node-cidrs"}, "--cluster-cidr", nil},
		{"malformed cluster cidr", []string{"--allocate-node-cidrs", "--cluster-cidr=10.0.0.0/99"}, "--cluster-cidr", nil},
		{"signing files", []string{"--cluster-signing-cert-file=/ca.crt", "--cluster-signing-key-file=/ca.key", "--cluster-signing-kubelet-serving-cert-file=/s.crt"}, "",
			func(o *Options) bool {
				return o.Config.CSRSigningController.KubeletServingSignerConfiguration.CertFile == "/s.crt"
			}},
		{"signing cert without key", []string{"--cluster-signing-cert-file=/ca.crt"}, "--cluster-signing-key-file", nil},
		{"grace period", []string{"--node-monitor-grace-period=4s"}, "",
			func(o *Options) bool {
				return o.Config.NodeLifecycleController.NodeMonitorGracePeriod.Duration == 4*time.Second
			}},
		{"zero monitor period", []string{"--node-monitor-period=0"}, "--node-monitor-period", nil},
		{"zone threshold above one", []string{"--unhealthy-zone-threshold=2"}, "--unhealthy-zone-threshold", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := New(nil)
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs, known)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			var all []string
			for _, e := range o.Validate(known) {
				all = append(all, e.Error())
			}
			joined := strings.Join(all, "; ")
			if tt.wantErr == "" && joined != "" {
				t.Fatalf("unexpected errors: %s", joined)
			}
			if tt.wantErr != "" && !strings.Contains(joined, tt.wantErr) {
				t.Fatalf("errors %q, want %q", joined, tt.wantErr)
			}
			if tt.check != nil && !tt.check(o) {
				t.Errorf("flags not applied: %+v", o.Config)
			}
		})
	}
}
