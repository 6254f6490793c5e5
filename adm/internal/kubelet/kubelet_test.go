package kubelet

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
	"trireme.dev/api/config/v1alpha1"

	"trireme.dev/adm/internal/options"
)

func TestDNSIP(t *testing.T) {
	for subnet, want := range map[string]string{"10.96.0.0/12": "10.96.0.10", "10.200.0.0/16": "10.200.0.10", "fd00::/108": "fd00::a"} {
		if got, err := DNSIP(subnet); err != nil || got != want {
			t.Errorf("DNSIP(%s) = %s, %v; want %s", subnet, got, err, want)
		}
	}
}

func TestConfiguration(t *testing.T) {
	root := t.TempDir()
	cfg, err := (&options.Init{}).Resolve(nil, root, options.Environment{
		Hostname:          func() (string, error) { return "n1", nil },
		DefaultAddress:    func() (net.IP, error) { return net.ParseIP("10.0.0.2"), nil },
		DefaultK8sVersion: "v1.37.0",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, v1 := range []bool{true, false} {
		kc, err := Configuration(cfg, v1)
		if err != nil {
			t.Fatal(err)
		}
		path, err := Write(cfg, kc)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := os.ReadFile(path)
		var back kubeletv1beta1.KubeletConfiguration
		if err := yaml.UnmarshalStrict(data, &back); err != nil {
			t.Fatal(err)
		}
		if back.Kind != "KubeletConfiguration" || back.ClusterDNS[0] != "10.96.0.10" || back.StaticPodPath != root+"/etc/trireme/manifests" ||
			back.ContainerRuntimeEndpoint != "unix://"+root+"/run/containerd/containerd.sock" || *back.FailSwapOn || !back.ServerTLSBootstrap {
			t.Errorf("config:\n%s", data)
		}
		if (back.FailCgroupV1 != nil && !*back.FailCgroupV1) != v1 {
			t.Errorf("cgroup v1 %v: failCgroupV1 = %v", v1, back.FailCgroupV1)
		}
	}
	cmd := strings.Join(Command("/bin/trireme-kubelet", cfg), " ")
	if !strings.Contains(cmd, "--kubeconfig="+root+"/etc/trireme/kubelet.conf") || !strings.Contains(cmd, "--hostname-override=n1") {
		t.Errorf("command %s", cmd)
	}
}

func TestConfigurationFromUserDocument(t *testing.T) {
	root := t.TempDir()
	cfg, err := (&options.Init{}).Resolve(nil, root, options.Environment{
		Hostname:          func() (string, error) { return "n1", nil },
		DefaultAddress:    func() (net.IP, error) { return net.ParseIP("10.0.0.2"), nil },
		DefaultK8sVersion: "v1.37.0",
	})
	if err != nil {
		t.Fatal(err)
	}
	hundred := int32(100)
	cfg.Kubelet = &kubeletv1beta1.KubeletConfiguration{
		EvictionHard:                map[string]string{"nodefs.available": "1%"},
		ImageGCHighThresholdPercent: &hundred,
		ClusterDomain:               "example.org",
	}
	kc, err := Configuration(cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		field     string
		got, want any
	}{
		{"evictionHard (user)", kc.EvictionHard["nodefs.available"], "1%"},
		{"imageGCHighThresholdPercent (user)", *kc.ImageGCHighThresholdPercent, int32(100)},
		{"clusterDomain (user wins)", kc.ClusterDomain, "example.org"},
		{"staticPodPath (triremeadm)", kc.StaticPodPath, root + "/etc/trireme/manifests"},
		{"podLogsDir below the root", kc.PodLogsDir, root + "/var/log/pods"},
		{"kind", kc.Kind, "KubeletConfiguration"},
		{"serverTLSBootstrap (triremeadm)", kc.ServerTLSBootstrap, true},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.field, tt.got, tt.want)
		}
	}
	if cfg.Kubelet.StaticPodPath != "" {
		t.Error("Configuration changed the user's document")
	}
	cfg.Kubelet.TLSCertFile, cfg.Kubelet.TLSPrivateKeyFile = "/etc/node.crt", "/etc/node.key"
	kc, err = Configuration(cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	if kc.ServerTLSBootstrap {
		t.Error("with the user's tlsCertFile serverTLSBootstrap = true, want false")
	}
}

func TestCommandCloudProvider(t *testing.T) {
	for _, tc := range []struct {
		provider string
		want     bool
	}{{"", false}, {v1alpha1.CloudProviderExternal, true}} {
		cfg := &options.Config{Init: &v1alpha1.InitConfiguration{}, Cluster: &v1alpha1.ClusterConfiguration{CloudProvider: tc.provider}}
		got := slices.Contains(Command("trireme-kubelet", cfg), "--cloud-provider=external")
		if got != tc.want {
			t.Errorf("cloudProvider %q: --cloud-provider=external given %v, want %v", tc.provider, got, tc.want)
		}
	}
}

func TestBinaryVersion(t *testing.T) {
	for _, tc := range []struct{ name, prints, want string }{
		{name: "trireme", prints: "v1.37.0-trireme.5415a05", want: "v1.37.0-trireme.5415a05"},
		{name: "upstream", prints: "Kubernetes v1.37.2", want: "v1.37.2"},
		{name: "nothing", prints: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "kubelet")
			if err := os.WriteFile(bin, []byte("#!/bin/sh\necho '"+tc.prints+"'\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			got, err := BinaryVersion(context.Background(), bin)
			if got != tc.want || (err != nil) != (tc.want == "") {
				t.Errorf("BinaryVersion = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
