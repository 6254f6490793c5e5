package options

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"trireme.dev/api/config/v1alpha1"
)

func TestDecodeConfigWithKubelet(t *testing.T) {
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
			docs, err := DecodeConfig([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			kc := docs.Kubelet
			if (kc != nil) != tt.wantKubelet {
				t.Fatalf("kubelet document %v, want %v", kc != nil, tt.wantKubelet)
			}
			if kc != nil && (kc.ImageGCHighThresholdPercent == nil || *kc.ImageGCHighThresholdPercent != 100) {
				t.Errorf("imageGCHighThresholdPercent %v", kc.ImageGCHighThresholdPercent)
			}
			if (docs.Cluster != nil) != tt.wantCluster || (docs.Cluster != nil && docs.Cluster.ClusterName != "c1") {
				t.Errorf("cluster document %+v", docs.Cluster)
			}
		})
	}
}

func TestDecodeConfig(t *testing.T) {
	good := `
apiVersion: triremeadm.config.trireme.dev/v1alpha1
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: 10.0.0.2
nodeRegistration:
  name: cp-1
---
apiVersion: triremeadm.config.trireme.dev/v1alpha1
kind: ClusterConfiguration
controlPlaneEndpoint: cp.example.com:6443
networking:
  podSubnet: 10.50.0.0/16
apiServer:
  extraArgs:
  - name: v
    value: "2"
  certSANs: [extra.example.com]
addons:
  values:
    coredns: {replicas: 3}
`
	docs, err := DecodeConfig([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if docs.Init == nil || docs.Init.NodeRegistration.Name != "cp-1" || docs.Cluster == nil ||
		docs.Cluster.Networking.PodSubnet != "10.50.0.0/16" || docs.Cluster.APIServer.ExtraArgs[0].Value != "2" ||
		docs.Cluster.APIServer.CertSANs[0] != "extra.example.com" || docs.Join != nil ||
		fmt.Sprint(docs.Cluster.Addons.Values["coredns"]) != "map[replicas:3]" {
		t.Errorf("decoded %+v %+v", docs.Init, docs.Cluster)
	}
	bad := []struct{ name, doc, want string }{
		{"unknown field", "apiVersion: " + v1alpha1.APIVersion + "\nkind: ClusterConfiguration\nnetworkin: {}\n", "unknown field"},
		{"unknown kind", "apiVersion: " + v1alpha1.APIVersion + "\nkind: Thing\n", "unknown kind"},
		{"wrong group", "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n", "apiVersion"},
		{"twice", "apiVersion: " + v1alpha1.APIVersion + "\nkind: JoinConfiguration\n---\napiVersion: " + v1alpha1.APIVersion + "\nkind: JoinConfiguration\n", "second"},
		{"wrong type", "apiVersion: " + v1alpha1.APIVersion + "\nkind: InitConfiguration\nlocalAPIEndpoint:\n  bindPort: abc\n", "bindPort"},
		{"duplicate field", "apiVersion: " + v1alpha1.APIVersion + "\nkind: ClusterConfiguration\nclusterName: a\nclusterName: b\n", `"clusterName" already set`},
		{"error names the document", "apiVersion: " + v1alpha1.APIVersion + "\nkind: InitConfiguration\n---\napiVersion: " + v1alpha1.APIVersion + "\nkind: ClusterConfiguration\nbogus: 1\n",
			"document 1 (ClusterConfiguration)"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeConfig([]byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("DecodeConfig err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// FuzzDecodeConfig checks that no input makes decoding, defaulting or validation
// panic.
func FuzzDecodeConfig(f *testing.F) {
	f.Add([]byte("apiVersion: " + v1alpha1.APIVersion + "\nkind: InitConfiguration\nbootstrapTokens:\n- token: abcdef.0123456789abcdef\n"))
	f.Add([]byte("apiVersion: " + v1alpha1.APIVersion + "\nkind: ClusterConfiguration\netcd:\n  external:\n    endpoints: [x]\n"))
	f.Add([]byte("apiVersion: " + v1alpha1.APIVersion + "\nkind: JoinConfiguration\ndiscovery:\n  bootstrapToken:\n    token: a\n"))
	f.Add([]byte("---\n---\n{}"))
	f.Add([]byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 10\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := DecodeConfig(data)
		if err != nil {
			return
		}
		if docs.Init != nil {
			v1alpha1.SetDefaultsInitConfiguration(docs.Init)
			_ = v1alpha1.ValidateInitConfiguration(docs.Init)
		}
		if docs.Cluster != nil {
			v1alpha1.SetDefaultsClusterConfiguration(docs.Cluster)
			_ = v1alpha1.ValidateClusterConfiguration(docs.Cluster)
		}
		if docs.Join != nil {
			v1alpha1.SetDefaultsJoinConfiguration(docs.Join)
			_ = v1alpha1.ValidateJoinConfiguration(docs.Join)
		}
	})
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: "+v1alpha1.APIVersion+"\nkind: Thing\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"missing file", filepath.Join(dir, "nope.yaml"), "nope.yaml: no such file"},
		{"errors name the file", bad, bad + ": document 0: unknown kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := LoadConfig(tt.path); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
