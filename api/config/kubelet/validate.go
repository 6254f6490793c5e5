package kubelet

import (
	"fmt"
	"net"

	"k8s.io/apimachinery/pkg/api/resource"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// Validate reports every invalid field of a defaulted cfg, each naming the
// field as the file spells it.
func Validate(cfg *kubeletv1beta1.KubeletConfiguration) []error {
	var errs []error
	bad := func(field string, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if cfg.Port < 1 || cfg.Port > 65535 {
		bad("port", "%d is not a port number", cfg.Port)
	}
	if cfg.ReadOnlyPort < 0 || cfg.ReadOnlyPort > 65535 {
		bad("readOnlyPort", "%d is not 0 or a port number", cfg.ReadOnlyPort)
	}
	if cfg.HealthzPort != nil && (*cfg.HealthzPort < 0 || *cfg.HealthzPort > 65535) {
		bad("healthzPort", "%d is not 0 or a port number", *cfg.HealthzPort)
	}
	if net.ParseIP(cfg.Address) == nil {
		bad("address", "%q is not an IP address", cfg.Address)
	}
	if cfg.MaxPods < 0 {
		bad("maxPods", "%d must not be negative", cfg.MaxPods)
	}
	if cfg.NodeLeaseDurationSeconds <= 0 {
		bad("nodeLeaseDurationSeconds", "%d must be positive", cfg.NodeLeaseDurationSeconds)
	}
	if cfg.NodeStatusUpdateFrequency.Duration <= 0 {
		bad("nodeStatusUpdateFrequency", "%s must be positive", cfg.NodeStatusUpdateFrequency.Duration)
	}
	if cfg.NodeStatusReportFrequency.Duration < cfg.NodeStatusUpdateFrequency.Duration {
		bad("nodeStatusReportFrequency", "%s must not be shorter than nodeStatusUpdateFrequency %s",
			cfg.NodeStatusReportFrequency.Duration, cfg.NodeStatusUpdateFrequency.Duration)
	}
	if cfg.OOMScoreAdj != nil && (*cfg.OOMScoreAdj < -1000 || *cfg.OOMScoreAdj > 1000) {
		bad("oomScoreAdj", "%d is outside [-1000, 1000]", *cfg.OOMScoreAdj)
	}
	switch cfg.CgroupDriver {
	case "cgroupfs", "systemd":
	default:
		bad("cgroupDriver", "%q: want cgroupfs or systemd", cfg.CgroupDriver)
	}
	switch cfg.Authorization.Mode {
	case kubeletv1beta1.KubeletAuthorizationModeAlwaysAllow, kubeletv1beta1.KubeletAuthorizationModeWebhook:
	default:
		bad("authorization.mode", "%q: want AlwaysAllow or Webhook", cfg.Authorization.Mode)
	}
	if cfg.ImageGCHighThresholdPercent != nil && cfg.ImageGCLowThresholdPercent != nil {
		hi, lo := *cfg.ImageGCHighThresholdPercent, *cfg.ImageGCLowThresholdPercent
		if hi < 0 || hi > 100 {
			bad("imageGCHighThresholdPercent", "%d is outside [0, 100]", hi)
		}
		if lo < 0 || lo > 100 {
			bad("imageGCLowThresholdPercent", "%d is outside [0, 100]", lo)
		}
		if lo >= hi {
			bad("imageGCLowThresholdPercent", "%d must be below imageGCHighThresholdPercent %d", lo, hi)
		}
	}
	if (cfg.TLSCertFile == "") != (cfg.TLSPrivateKeyFile == "") {
		bad("tlsCertFile", "tlsCertFile and tlsPrivateKeyFile must be given together")
	}
	for _, f := range []struct {
		name string
		m    map[string]string
	}{{"systemReserved", cfg.SystemReserved}, {"kubeReserved", cfg.KubeReserved}} {
		for k, v := range f.m {
			if _, err := resource.ParseQuantity(v); err != nil {
				bad(f.name+"["+k+"]", "%q is not a quantity", v)
			}
		}
	}
	for k, v := range cfg.EvictionHard {
		if _, err := ParseThreshold(v); err != nil {
			bad("evictionHard["+k+"]", "%v", err)
		}
	}
	for i, t := range cfg.RegisterWithTaints {
		if t.Key == "" {
			bad(fmt.Sprintf("registerWithTaints[%d].key", i), "must not be empty")
		}
	}
	if cfg.ContainerRuntimeEndpoint == "" {
		bad("containerRuntimeEndpoint", "must not be empty")
	}
	return errs
}

// Threshold is an eviction threshold: an absolute quantity or a
// percentage of capacity.
type Threshold struct {
	// Quantity is set for absolute thresholds ("100Mi").
	Quantity *resource.Quantity
	// Percent is set for relative thresholds ("10%"), in (0, 100].
	Percent float64
}

// ParseThreshold parses an eviction threshold value.
func ParseThreshold(v string) (Threshold, error) {
	if n := len(v); n > 0 && v[n-1] == '%' {
		var p float64
		if _, err := fmt.Sscanf(v[:n-1], "%g", &p); err != nil || p < 0 || p > 100 {
			return Threshold{}, fmt.Errorf("%q is not a percentage in [0%%, 100%%]", v)
		}
		return Threshold{Percent: p}, nil
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return Threshold{}, fmt.Errorf("%q is neither a quantity nor a percentage", v)
	}
	return Threshold{Quantity: &q}, nil
}
