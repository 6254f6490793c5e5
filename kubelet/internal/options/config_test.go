package options

import (
	"strings"
	"testing"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	kubeletconfig "trireme.dev/api/config/kubelet"
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
			c, err := configKind.Decode([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if errs := kubeletconfig.Validate(c); len(errs) > 0 {
				t.Fatalf("defaulted config invalid: %v", errs)
			}
			tc.check(t, c)
		})
	}
}
