package kubelet

import (
	"strings"
	"testing"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*kubeletv1beta1.KubeletConfiguration)
		want   string
	}{
		{"port out of range", func(c *kubeletv1beta1.KubeletConfiguration) { c.Port = 70000 }, "port:"},
		{"bad address", func(c *kubeletv1beta1.KubeletConfiguration) { c.Address = "nowhere" }, "address:"},
		{"bad cgroup driver", func(c *kubeletv1beta1.KubeletConfiguration) { c.CgroupDriver = "magic" }, "cgroupDriver:"},
		{"bad authorization mode", func(c *kubeletv1beta1.KubeletConfiguration) { c.Authorization.Mode = "Maybe" }, "authorization.mode:"},
		{"gc thresholds inverted", func(c *kubeletv1beta1.KubeletConfiguration) { c.ImageGCLowThresholdPercent = ptr.To[int32](90) }, "imageGCLowThresholdPercent:"},
		{"bad reservation", func(c *kubeletv1beta1.KubeletConfiguration) { c.KubeReserved = map[string]string{"memory": "lots"} }, "kubeReserved[memory]:"},
		{"bad eviction threshold", func(c *kubeletv1beta1.KubeletConfiguration) {
			c.EvictionHard = map[string]string{"memory.available": "200%"}
		}, "evictionHard[memory.available]:"},
		{"report faster than update", func(c *kubeletv1beta1.KubeletConfiguration) { c.NodeStatusReportFrequency.Duration = 1 }, "nodeStatusReportFrequency:"},
		{"tls cert without key", func(c *kubeletv1beta1.KubeletConfiguration) { c.TLSCertFile = "/x" }, "tlsCertFile:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			tc.mutate(c)
			errs := Validate(c)
			for _, err := range errs {
				if strings.HasPrefix(err.Error(), tc.want) {
					return
				}
			}
			t.Fatalf("errors %v, want one starting %q", errs, tc.want)
		})
	}
}

func TestParseThreshold(t *testing.T) {
	tests := []struct {
		in      string
		percent float64
		qty     string
		wantErr bool
	}{
		{in: "10%", percent: 10},
		{in: "100Mi", qty: "100Mi"},
		{in: "-1%", wantErr: true},
		{in: "abc", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			th, err := ParseThreshold(tc.in)
			if tc.wantErr != (err != nil) {
				t.Fatalf("err %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if tc.qty != "" && th.Quantity.String() != tc.qty {
				t.Errorf("quantity %s, want %s", th.Quantity, tc.qty)
			}
			if tc.percent != 0 && th.Percent != tc.percent {
				t.Errorf("percent %v, want %v", th.Percent, tc.percent)
			}
		})
	}
}
