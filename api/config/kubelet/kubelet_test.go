package kubelet

import (
	"strings"
	"testing"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string
		check   func(*testing.T, *kubeletv1beta1.KubeletConfiguration)
	}{{
		name: "empty file gets upstream defaults",
		in:   "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n",
		check: func(t *testing.T, c *kubeletv1beta1.KubeletConfiguration) {
			if c.Port != 10250 || c.MaxPods != 110 || !*c.FailCgroupV1 || c.CgroupDriver != "cgroupfs" {
				t.Errorf("defaults: port %d maxPods %d failCgroupV1 %v driver %s", c.Port, c.MaxPods, *c.FailCgroupV1, c.CgroupDriver)
			}
			if c.Authorization.Mode != "Webhook" || *c.Authentication.Anonymous.Enabled {
				t.Errorf("auth defaults: %+v %+v", c.Authorization, c.Authentication)
			}
			if c.NodeLeaseDurationSeconds != 40 || c.EvictionHard["memory.available"] != "100Mi" {
				t.Errorf("lease %d eviction %v", c.NodeLeaseDurationSeconds, c.EvictionHard)
			}
		},
	}, {
		name: "kubeadm-style file keeps its values",
		in: `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
clusterDNS: ["10.96.0.10"]
clusterDomain: cluster.local
staticPodPath: /etc/trireme/manifests
authentication:
  anonymous:
    enabled: false
`,
		check: func(t *testing.T, c *kubeletv1beta1.KubeletConfiguration) {
			if *c.FailCgroupV1 || c.StaticPodPath != "/etc/trireme/manifests" || c.ClusterDNS[0] != "10.96.0.10" {
				t.Errorf("values lost: %v %q %v", *c.FailCgroupV1, c.StaticPodPath, c.ClusterDNS)
			}
		},
	}, {
		name:    "unknown field is refused",
		in:      "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPod: 3\n",
		wantErr: "unknown field",
	}, {
		name:    "wrong kind is refused",
		in:      "apiVersion: v1\nkind: Pod\n",
		wantErr: "no kind",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Decode([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if errs := Validate(c); len(errs) > 0 {
				t.Fatalf("defaulted config invalid: %v", errs)
			}
			tc.check(t, c)
		})
	}
}

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
