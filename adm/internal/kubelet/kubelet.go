// Package kubelet writes the kubelet's configuration for a triremeadm node — a
// KubeletConfiguration (upstream's kubelet.config.k8s.io/v1beta1, so an existing
// kubelet reads it unchanged) with the static pod path, the cluster DNS address,
// containerd's endpoint, client-CA authentication and webhook authorization — and
// starts the kubelet under triremeadm's supervisor.
package kubelet

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"trireme.dev/adm/internal/options"
	"trireme.dev/adm/internal/pki"
)

// Binary is the Trireme kubelet's executable name, looked up in PATH.
const Binary = "trireme-kubelet"

// ConfigFile is the KubeletConfiguration's path below the kubelet directory.
func ConfigFile(cfg *options.Config) string {
	return filepath.Join(cfg.Paths.KubeletDir(), "config.yaml")
}

// DNSIP is the cluster DNS Service's address: the 10th IP of the service range, as
// kubeadm uses.
func DNSIP(serviceSubnet string) (string, error) {
	_, n, err := net.ParseCIDR(serviceSubnet)
	if err != nil {
		return "", fmt.Errorf("service subnet %q: %w", serviceSubnet, err)
	}
	return pki.NthIP(n, 10).String(), nil
}

// Configuration builds the node's KubeletConfiguration. cgroupV1 turns off the
// kubelet's refusal to run on cgroup v1 hosts.
func Configuration(cfg *options.Config, cgroupV1 bool) (*kubeletv1beta1.KubeletConfiguration, error) {
	dns, err := DNSIP(cfg.Cluster.Networking.ServiceSubnet)
	if err != nil {
		return nil, err
	}
	kc := &kubeletv1beta1.KubeletConfiguration{
		TypeMeta:      metav1.TypeMeta{APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration"},
		StaticPodPath: cfg.Paths.ManifestsDir(),
		ClusterDNS:    []string{dns},
		ClusterDomain: cfg.Cluster.Networking.DNSDomain,
		Authentication: kubeletv1beta1.KubeletAuthentication{
			X509:      kubeletv1beta1.KubeletX509Authentication{ClientCAFile: filepath.Join(cfg.PKIDir(), "ca.crt")},
			Webhook:   kubeletv1beta1.KubeletWebhookAuthentication{Enabled: ptr.To(true)},
			Anonymous: kubeletv1beta1.KubeletAnonymousAuthentication{Enabled: ptr.To(false)},
		},
		Authorization:            kubeletv1beta1.KubeletAuthorization{Mode: kubeletv1beta1.KubeletAuthorizationModeWebhook},
		CgroupDriver:             "cgroupfs",
		ContainerRuntimeEndpoint: "unix://" + cfg.Paths.ContainerdSocket(),
		RotateCertificates:       true,
		FailSwapOn:               ptr.To(false),
		HealthzBindAddress:       "127.0.0.1",
	}
	if cgroupV1 {
		kc.FailCgroupV1 = ptr.To(false)
	}
	return kc, nil
}

// Write writes the KubeletConfiguration and returns its path.
func Write(cfg *options.Config, kc *kubeletv1beta1.KubeletConfiguration) (string, error) {
	data, err := yaml.Marshal(kc)
	if err != nil {
		return "", err
	}
	path := ConfigFile(cfg)
	if err := os.MkdirAll(cfg.Paths.KubeletDir(), 0o700); err != nil {
		return "", err
	}
	return path, pki.WriteFile(path, data, 0o644)
}

// Command is the kubelet's command line (upstream's flags).
func Command(binary string, cfg *options.Config) []string {
	return []string{binary,
		"--config=" + ConfigFile(cfg),
		"--kubeconfig=" + cfg.Paths.Kubeconfig("kubelet.conf"),
		"--root-dir=" + cfg.Paths.KubeletDir(),
		"--hostname-override=" + cfg.NodeName(),
		"--node-ip=" + cfg.Init.LocalAPIEndpoint.AdvertiseAddress,
	}
}
