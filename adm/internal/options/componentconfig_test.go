package options

import (
	"strings"
	"testing"

	"trireme.dev/api/config/v1alpha1"
)

func TestSplitComponentConfigs(t *testing.T) {
	const cluster = "apiVersion: " + v1alpha1.APIVersion + "\nkind: ClusterConfiguration\nclusterName: c1\n"
	const kubelet = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nimageGCHighThresholdPercent: 100\n"
	tests := []struct {
		name        string
		in          string
		wantKubelet bool
		wantCluster bool
		wantErr     string
	}{
		{"both", cluster + "---\n" + kubelet, true, true, ""},
		{"kubelet only", kubelet, true, false, ""},
		{"ours only", cluster, false, true, ""},
		{"two kubelet documents", kubelet + "---\n" + kubelet, false, false, "a second KubeletConfiguration"},
		{"unknown kubelet field", kubelet + "nope: 1\n", false, false, "unknown field"},
		{"unknown kind of the kubelet group", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: Other\n", false, false, "unknown kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rest, kc, err := SplitComponentConfigs([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (kc != nil) != tt.wantKubelet {
				t.Fatalf("kubelet document %v, want %v", kc != nil, tt.wantKubelet)
			}
			if kc != nil && (kc.ImageGCHighThresholdPercent == nil || *kc.ImageGCHighThresholdPercent != 100) {
				t.Errorf("imageGCHighThresholdPercent %v", kc.ImageGCHighThresholdPercent)
			}
			docs, err := v1alpha1.Decode(rest)
			if err != nil {
				t.Fatal(err)
			}
			if (docs.Cluster != nil) != tt.wantCluster || (docs.Cluster != nil && docs.Cluster.ClusterName != "c1") {
				t.Errorf("cluster document %+v", docs.Cluster)
			}
		})
	}
}
