// Package kubelet writes the kubelet's configuration for a triremeadm node — a
// KubeletConfiguration (upstream's kubelet.config.k8s.io/v1beta1, so an existing
// kubelet reads it unchanged) with the static pod path, the cluster DNS address,
// containerd's endpoint, client-CA authentication, webhook authorization and a
// serving certificate from kubelet-serving CSRs (serverTLSBootstrap) — and
// starts the kubelet under triremeadm's supervisor.
package kubelet

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
	"trireme.dev/api/config/v1alpha1"

	"trireme.dev/adm/internal/options"
	"trireme.dev/adm/internal/pki"
)

// Binary is the Trireme kubelet's executable name, looked up in PATH.
const Binary = "trireme-kubelet"

// ConfigFile is the KubeletConfiguration's path below the kubelet directory.
func ConfigFile(cfg *options.Config) string {
	return cfg.Paths.KubeletConfig()
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
	kc := &kubeletv1beta1.KubeletConfiguration{}
	if cfg.Kubelet != nil {
		kc = cfg.Kubelet.DeepCopy()
	}
	// The user's document wins over triremeadm's choices, as in kubeadm.
	kc.TypeMeta = metav1.TypeMeta{APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration"}
	setString(&kc.StaticPodPath, cfg.Paths.ManifestsDir())
	if len(kc.ClusterDNS) == 0 {
		kc.ClusterDNS = []string{dns}
	}
	setString(&kc.ClusterDomain, cfg.Cluster.Networking.DNSDomain)
	setString(&kc.Authentication.X509.ClientCAFile, filepath.Join(cfg.PKIDir(), "ca.crt"))
	if kc.Authentication.Webhook.Enabled == nil {
		kc.Authentication.Webhook.Enabled = ptr.To(true)
	}
	if kc.Authentication.Anonymous.Enabled == nil {
		kc.Authentication.Anonymous.Enabled = ptr.To(false)
	}
	if kc.Authorization.Mode == "" {
		kc.Authorization.Mode = kubeletv1beta1.KubeletAuthorizationModeWebhook
	}
	setString(&kc.CgroupDriver, "cgroupfs")
	setString(&kc.ContainerRuntimeEndpoint, "unix://"+cfg.Paths.ContainerdSocket())
	// Below a test root the containers' logs stay below it too.
	setString(&kc.PodLogsDir, cfg.Paths.In("/var/log/pods"))
	kc.RotateCertificates = true
	// The node server's certificate comes from a kubelet-serving CSR the
	// controller-manager approves and the cluster CA signs, so clients such
	// as metrics-server verify it against the CA instead of skipping TLS
	// verification. A bool cannot tell a user's false from unset; a node
	// that wants its own certificate names tlsCertFile instead.
	if kc.TLSCertFile == "" {
		kc.ServerTLSBootstrap = true
	}
	if kc.FailSwapOn == nil {
		kc.FailSwapOn = ptr.To(false)
	}
	setString(&kc.HealthzBindAddress, "127.0.0.1")
	if cgroupV1 && kc.FailCgroupV1 == nil {
		kc.FailCgroupV1 = ptr.To(false)
	}
	return kc, nil
}

func setString(field *string, value string) {
	if *field == "" {
		*field = value
	}
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
	cmd := []string{binary,
		"--config=" + ConfigFile(cfg),
		"--kubeconfig=" + cfg.Paths.Kubeconfig("kubelet.conf"),
		"--root-dir=" + cfg.Paths.KubeletDir(),
		"--hostname-override=" + cfg.NodeName(),
		"--node-ip=" + cfg.Init.LocalAPIEndpoint.AdvertiseAddress,
	}
	if cfg.ExternalCloudProvider() {
		cmd = append(cmd, "--cloud-provider="+v1alpha1.CloudProviderExternal)
	}
	return cmd
}

// BinaryVersion is the version the kubelet executable binary reports
// (`--version`: Trireme's prints the version alone, upstream's after
// "Kubernetes").
func BinaryVersion(ctx context.Context, binary string) (string, error) {
	out, err := exec.CommandContext(ctx, binary, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", binary, err)
	}
	fields := strings.Fields(string(out))
	if len(fields) == 0 {
		return "", fmt.Errorf("%s --version printed nothing", binary)
	}
	return fields[len(fields)-1], nil
}
