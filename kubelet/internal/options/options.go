// Package options holds trireme-kubelet's command line: upstream's flags,
// applied over the --config KubeletConfiguration file.
package options

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	kubeletconfig "trireme.dev/api/config/kubelet"
	"trireme.dev/componentbase/logging"
)

// Options is everything the kubelet is started with.
type Options struct {
	// ConfigFile is --config, a KubeletConfiguration.
	ConfigFile string
	// Kubeconfig is --kubeconfig, the credentials for the apiserver.
	Kubeconfig string
	// HostnameOverride is --hostname-override, the node's name.
	HostnameOverride string
	// NodeIP is --node-ip, the node's InternalIP address.
	NodeIP string
	// RootDir is --root-dir, where pod volumes and state live.
	RootDir string
	// BootstrapKubeconfig is --bootstrap-kubeconfig: credentials (a
	// bootstrap token) that may only ask for a client certificate, used
	// when Kubeconfig is missing or its certificate has expired.
	BootstrapKubeconfig string
	// CertDir is --cert-dir, where bootstrapped and rotated certificates
	// and the self-signed serving pair live; by default <root-dir>/pki.
	CertDir string
	// NodeLabels is --node-labels.
	NodeLabels map[string]string
	// CloudProvider is --cloud-provider: "" or "external", which leaves the
	// node's initialization to a cloud-controller-manager.
	CloudProvider string
	// Settings are --log-format and -v.
	logging.Settings
	// Config is the configuration file's content with the flags given on
	// the command line applied over it.
	Config *kubeletv1beta1.KubeletConfiguration

	fs                       *pflag.FlagSet
	containerRuntimeEndpoint string
	podManifestPath          string
	registerWithTaints       []string
	port                     int32
	failCgroupV1             bool
	cgroupDriver             string
	kubeReserved             map[string]string
	systemReserved           map[string]string
	maxPods                  int32
	clusterDNS               []string
	clusterDomain            string
	tlsCertFile, tlsKeyFile  string
	clientCAFile             string
	authorizationMode        string
	anonymousAuth            bool
	healthzPort              int32
	podLogsDir               string
	fileCheckFrequency       time.Duration
	rotateCertificates       bool
}

// CloudProviderExternal is the --cloud-provider value that hands the node
// to a cloud-controller-manager.
const CloudProviderExternal = "external"

// New returns options with no flags parsed yet.
func New() *Options {
	return &Options{RootDir: "/var/lib/trireme/kubelet", Settings: logging.Defaults("text")}
}

// AddFlags registers the flags on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.fs = fs
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "A KubeletConfiguration file (kubelet.config.k8s.io/v1beta1); flags given on the command line win over it.")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig for the apiserver.")
	fs.StringVar(&o.BootstrapKubeconfig, "bootstrap-kubeconfig", o.BootstrapKubeconfig, "A kubeconfig whose credentials (a bootstrap token) are used to request a client certificate when --kubeconfig is missing or expired; the result is written to --kubeconfig.")
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir, "Directory of the kubelet's certificates; by default <root-dir>/pki.")
	fs.BoolVar(&o.rotateCertificates, "rotate-certificates", false, "Renew the client certificate through CSRs as it nears expiry.")
	fs.StringVar(&o.HostnameOverride, "hostname-override", o.HostnameOverride, "The node's name instead of the hostname.")
	fs.StringVar(&o.NodeIP, "node-ip", o.NodeIP, "The node's InternalIP; by default the address of the interface holding the default route.")
	fs.StringVar(&o.RootDir, "root-dir", o.RootDir, "Directory for the kubelet's files (volume mounts, pod state).")
	fs.StringToStringVar(&o.NodeLabels, "node-labels", o.NodeLabels, "Labels to add when registering the node (key=value,...).")
	fs.StringVar(&o.CloudProvider, "cloud-provider", o.CloudProvider, `"external" registers the node tainted node.cloudprovider.kubernetes.io/uninitialized for a cloud-controller-manager to initialize, and leaves its addresses to it; empty for none.`)
	o.Settings.AddFlags(fs)
	fs.StringVar(&o.containerRuntimeEndpoint, "container-runtime-endpoint", kubeletconfig.DefaultContainerRuntimeEndpoint, "The CRI endpoint (unix:///path/to/socket).")
	fs.StringVar(&o.podManifestPath, "pod-manifest-path", "", "Directory of static pod manifests.")
	fs.StringSliceVar(&o.registerWithTaints, "register-with-taints", nil, "Taints to register the node with (key=value:Effect,...).")
	fs.Int32Var(&o.port, "port", 10250, "Port of the node server.")
	fs.BoolVar(&o.failCgroupV1, "fail-cgroupv1", true, "Refuse to start on a cgroup v1 host.")
	fs.StringVar(&o.cgroupDriver, "cgroup-driver", "cgroupfs", "cgroupfs or systemd.")
	fs.StringToStringVar(&o.kubeReserved, "kube-reserved", nil, "Resources reserved for Kubernetes components (cpu=100m,memory=100Mi,...).")
	fs.StringToStringVar(&o.systemReserved, "system-reserved", nil, "Resources reserved for the system.")
	fs.Int32Var(&o.maxPods, "max-pods", 110, "Number of pods that can run on this node.")
	fs.StringSliceVar(&o.clusterDNS, "cluster-dns", nil, "Cluster DNS server addresses.")
	fs.StringVar(&o.clusterDomain, "cluster-domain", "", "The cluster's DNS domain.")
	fs.StringVar(&o.tlsCertFile, "tls-cert-file", "", "Serving certificate of the node server.")
	fs.StringVar(&o.tlsKeyFile, "tls-private-key-file", "", "Key of --tls-cert-file.")
	fs.StringVar(&o.clientCAFile, "client-ca-file", "", "CA bundle that verifies client certificates presented to the node server.")
	fs.StringVar(&o.authorizationMode, "authorization-mode", "Webhook", "AlwaysAllow or Webhook.")
	fs.BoolVar(&o.anonymousAuth, "anonymous-auth", false, "Allow anonymous requests to the node server.")
	fs.Int32Var(&o.healthzPort, "healthz-port", 10248, "Port of the plain-HTTP /healthz on localhost; 0 disables it.")
	fs.DurationVar(&o.fileCheckFrequency, "file-check-frequency", 20*time.Second, "How often the static pod manifests are read.")
	fs.StringVar(&o.podLogsDir, "pod-logs-dir", "/var/log/pods", "Directory of container log files.")
}

// Complete loads --config and applies the flags set on the command line
// over it, then validates the result.
func (o *Options) Complete() error {
	var cfg *kubeletv1beta1.KubeletConfiguration
	if o.ConfigFile != "" {
		c, err := configKind.Load(o.ConfigFile)
		if err != nil {
			return err
		}
		cfg = c
	} else {
		cfg = kubeletconfig.Default()
	}
	set := func(name string) bool { return o.fs != nil && o.fs.Changed(name) }
	if set("container-runtime-endpoint") {
		cfg.ContainerRuntimeEndpoint = o.containerRuntimeEndpoint
	}
	if set("pod-manifest-path") {
		cfg.StaticPodPath = o.podManifestPath
	}
	if set("port") {
		cfg.Port = o.port
	}
	if set("fail-cgroupv1") {
		cfg.FailCgroupV1 = &o.failCgroupV1
	}
	if set("cgroup-driver") {
		cfg.CgroupDriver = o.cgroupDriver
	}
	if set("kube-reserved") {
		cfg.KubeReserved = o.kubeReserved
	}
	if set("system-reserved") {
		cfg.SystemReserved = o.systemReserved
	}
	if set("max-pods") {
		cfg.MaxPods = o.maxPods
	}
	if set("cluster-dns") {
		cfg.ClusterDNS = o.clusterDNS
	}
	if set("cluster-domain") {
		cfg.ClusterDomain = o.clusterDomain
	}
	if set("tls-cert-file") {
		cfg.TLSCertFile = o.tlsCertFile
	}
	if set("tls-private-key-file") {
		cfg.TLSPrivateKeyFile = o.tlsKeyFile
	}
	if set("client-ca-file") {
		cfg.Authentication.X509.ClientCAFile = o.clientCAFile
	}
	if set("authorization-mode") {
		cfg.Authorization.Mode = kubeletv1beta1.KubeletAuthorizationMode(o.authorizationMode)
	}
	if set("anonymous-auth") {
		cfg.Authentication.Anonymous.Enabled = &o.anonymousAuth
	}
	if set("healthz-port") {
		cfg.HealthzPort = &o.healthzPort
	}
	if set("file-check-frequency") {
		cfg.FileCheckFrequency.Duration = o.fileCheckFrequency
	}
	if set("pod-logs-dir") {
		cfg.PodLogsDir = o.podLogsDir
	}
	if set("rotate-certificates") {
		cfg.RotateCertificates = o.rotateCertificates
	}
	if set("register-with-taints") {
		taints, err := ParseTaints(o.registerWithTaints)
		if err != nil {
			return err
		}
		cfg.RegisterWithTaints = taints
	}
	if errs := kubeletconfig.Validate(cfg); len(errs) > 0 {
		return fmt.Errorf("invalid kubelet configuration: %v", errs)
	}
	if o.CloudProvider != "" && o.CloudProvider != CloudProviderExternal {
		return fmt.Errorf("--cloud-provider=%q: only %q (or none) is supported; in-tree providers are gone upstream too", o.CloudProvider, CloudProviderExternal)
	}
	if o.Kubeconfig == "" {
		return fmt.Errorf("--kubeconfig is required")
	}
	if o.CertDir == "" {
		o.CertDir = filepath.Join(o.RootDir, "pki")
	}
	if o.HostnameOverride == "" {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("hostname: %w", err)
		}
		o.HostnameOverride = h
	}
	o.HostnameOverride = strings.ToLower(strings.TrimSpace(o.HostnameOverride))
	o.Config = cfg
	return nil
}

// ParseTaints parses key[=value]:Effect specifications.
func ParseTaints(specs []string) ([]corev1.Taint, error) {
	var taints []corev1.Taint
	for _, s := range specs {
		kv, effect, ok := strings.Cut(s, ":")
		if !ok {
			return nil, fmt.Errorf("taint %q: want key[=value]:Effect", s)
		}
		switch corev1.TaintEffect(effect) {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			return nil, fmt.Errorf("taint %q: unknown effect %q", s, effect)
		}
		k, v, _ := strings.Cut(kv, "=")
		if k == "" {
			return nil, fmt.Errorf("taint %q: empty key", s)
		}
		taints = append(taints, corev1.Taint{Key: k, Value: v, Effect: corev1.TaintEffect(effect)})
	}
	return taints, nil
}
