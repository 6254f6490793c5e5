// Package options turns triremeadm's flags and --config file into one defaulted,
// validated configuration. As in kubeadm, a flag the user set overrides the file's
// field; fields neither sets get the API's static defaults, then the machine's
// (host name, the default route's address, triremeadm's version).
package options

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"trireme.dev/api/config/v1alpha1"

	"trireme.dev/adm/internal/kubeconfig"
	"trireme.dev/adm/internal/paths"
	"trireme.dev/adm/internal/pki"
	"trireme.dev/adm/internal/version"
)

// Init holds `triremeadm init`'s flags.
type Init struct {
	ConfigFile            string
	AdvertiseAddress      string
	BindPort              int32
	CertSANs              []string
	CertDir               string
	ControlPlaneEndpoint  string
	KubernetesVersion     string
	NodeName              string
	PodCIDR               string
	ServiceCIDR           string
	DNSDomain             string
	ImageRepository       string
	CRISocket             string
	IgnorePreflightErrors []string
	SkipPhases            []string
	Token                 string
	TokenTTL              time.Duration
	SingleNode            bool
	UploadCerts           bool
	CertificateKey        string
	ControlPlaneVIP       bool
	VIPInterface          string
	CloudProvider         string
	EtcdSnapshotInterval  time.Duration
	EtcdSnapshotRetention int32
	EtcdRestore           string
}

// AddFlags registers kubeadm's init flags on fs.
func (o *Init) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigFile, "config", "", "Path to a triremeadm configuration file (InitConfiguration and ClusterConfiguration of "+v1alpha1.APIVersion+", optionally a KubeletConfiguration); flags override it.")
	fs.StringVar(&o.AdvertiseAddress, "apiserver-advertise-address", "", "The IP address the apiserver advertises; default the address of the default route's interface.")
	fs.Int32Var(&o.BindPort, "apiserver-bind-port", v1alpha1.DefaultAPIBindPort, "The port the apiserver listens on.")
	fs.StringSliceVar(&o.CertSANs, "apiserver-cert-extra-sans", nil, "Extra Subject Alternative Names (IPs or DNS names) for the apiserver serving certificate.")
	fs.StringVar(&o.CertDir, "cert-dir", v1alpha1.DefaultCertificatesDir, "Where certificates are stored.")
	fs.StringVar(&o.ControlPlaneEndpoint, "control-plane-endpoint", "", "A stable IP or DNS name, with an optional port, for the control plane.")
	fs.StringVar(&o.KubernetesVersion, "kubernetes-version", version.Version, "The version whose images are used.")
	fs.StringVar(&o.NodeName, "node-name", "", "The node's name; default the host name.")
	fs.StringVar(&o.PodCIDR, "pod-network-cidr", v1alpha1.DefaultPodSubnet, "The range node pod CIDRs are allocated from.")
	fs.StringVar(&o.ServiceCIDR, "service-cidr", v1alpha1.DefaultServiceSubnet, "The range of Service ClusterIPs.")
	fs.StringVar(&o.DNSDomain, "service-dns-domain", v1alpha1.DefaultDNSDomain, "The cluster's DNS domain.")
	fs.StringVar(&o.ImageRepository, "image-repository", v1alpha1.DefaultImageRepository, "The repository prefix of the images.")
	fs.StringVar(&o.CRISocket, "cri-socket", v1alpha1.DefaultCRISocket, "The container runtime's socket.")
	fs.StringSliceVar(&o.IgnorePreflightErrors, "ignore-preflight-errors", nil, "Preflight checks whose errors become warnings, e.g. Swap,Port-6443; 'all' ignores every one.")
	fs.StringSliceVar(&o.SkipPhases, "skip-phases", nil, "Phases to leave out.")
	fs.StringVar(&o.Token, "token", "", "The bootstrap token to create (\"[a-z0-9]{6}.[a-z0-9]{16}\"); default a random one.")
	fs.DurationVar(&o.TokenTTL, "token-ttl", v1alpha1.DefaultTokenTTL, "How long the bootstrap token lives; 0 means forever.")
	fs.BoolVar(&o.SingleNode, "single-node", false, "Leave the control-plane node schedulable (no NoSchedule taint).")
	fs.BoolVar(&o.UploadCerts, "upload-certs", false, "Store the shared certificates and keys, encrypted, in kube-system/kubeadm-certs for `join --control-plane`.")
	fs.StringVar(&o.CertificateKey, "certificate-key", "", "The key (64 hex digits) that encrypts kube-system/kubeadm-certs; default a random one.")
	fs.BoolVar(&o.ControlPlaneVIP, "control-plane-vip", false, "Hold --control-plane-endpoint's IP as a virtual IP on the control-plane node whose VIP manager holds a lease.")
	fs.StringVar(&o.VIPInterface, "vip-interface", "", "The interface the virtual IP goes on (implies --control-plane-vip); default the one holding the node's address.")
	fs.StringVar(&o.CloudProvider, "cloud-provider", "", `"external" runs trireme-cloud-controller-manager on every control-plane node and every kubelet with --cloud-provider=external.`)
	fs.DurationVar(&o.EtcdSnapshotInterval, "etcd-snapshot-interval", v1alpha1.DefaultEtcdSnapshotInterval, "How often every control-plane node snapshots its etcd member (the etcd-snapshot static pod); 0 turns it off.")
	fs.Int32Var(&o.EtcdSnapshotRetention, "etcd-snapshot-retention", v1alpha1.DefaultEtcdSnapshotRetention, "How many of its snapshots each control-plane node keeps.")
	fs.StringVar(&o.EtcdRestore, "etcd-restore", "", "Start the cluster's etcd from this snapshot (`triremeadm etcd snapshot save` or a scheduled one): a whole cluster restored, this node first; the other nodes are then reset and joined.")
}

// Config is the resolved configuration of a control-plane node.
type Config struct {
	Init    *v1alpha1.InitConfiguration
	Cluster *v1alpha1.ClusterConfiguration
	// Kubelet is the file's KubeletConfiguration, if any: the base of the
	// configuration triremeadm writes for the kubelet.
	Kubelet *kubeletv1beta1.KubeletConfiguration
	// Paths places every file, below --root-dir in tests.
	Paths paths.Paths
	// SingleNode leaves the node schedulable.
	SingleNode bool
	// UploadCerts stores the shared certificates in kube-system/kubeadm-certs.
	UploadCerts bool
	// EtcdRestore is a snapshot the local etcd member starts from.
	EtcdRestore string
	// EtcdInitialCluster, set on a control-plane node joining an existing etcd
	// cluster, is its member's --initial-cluster (initial-cluster-state=existing).
	EtcdInitialCluster string
}

// Environment is what dynamic defaults are read from; tests replace it.
type Environment struct {
	Hostname          func() (string, error)
	DefaultAddress    func() (net.IP, error)
	DefaultK8sVersion string
}

// HostEnvironment reads the real machine.
func HostEnvironment() Environment {
	return Environment{Hostname: os.Hostname, DefaultAddress: DefaultRouteAddress, DefaultK8sVersion: version.Version}
}

// Resolve builds the configuration from the file (if any), the flags the user set
// in fs, static and dynamic defaults, then validates it.
func (o *Init) Resolve(fs *pflag.FlagSet, root string, env Environment) (*Config, error) {
	init, cluster, kubelet, err := o.readConfigFile()
	if err != nil {
		return nil, err
	}
	o.applyInitFlags(fs, init)
	o.applyClusterFlags(fs, cluster)
	v1alpha1.SetDefaultsInitConfiguration(init)
	v1alpha1.SetDefaultsClusterConfiguration(cluster)
	if err := defaultFromEnvironment(init, cluster, env); err != nil {
		return nil, err
	}
	errs := v1alpha1.ValidateInitConfiguration(init)
	errs = append(errs, v1alpha1.ValidateClusterConfiguration(cluster)...)
	if err := errs.ToAggregate(); err != nil {
		return nil, fmt.Errorf("invalid configuration: %w", err)
	}
	return &Config{Init: init, Cluster: cluster, Kubelet: kubelet, Paths: paths.Paths{Root: root}, SingleNode: o.SingleNode, UploadCerts: o.UploadCerts, EtcdRestore: o.EtcdRestore}, nil
}

// readConfigFile decodes --config: its InitConfiguration and
// ClusterConfiguration (empty ones when it has none, or no file is
// given) and its KubeletConfiguration, if any. A JoinConfiguration is an
// error: the user ran the wrong command.
func (o *Init) readConfigFile() (*v1alpha1.InitConfiguration, *v1alpha1.ClusterConfiguration, *kubeletv1beta1.KubeletConfiguration, error) {
	init, cluster := &v1alpha1.InitConfiguration{}, &v1alpha1.ClusterConfiguration{}
	if o.ConfigFile == "" {
		return init, cluster, nil, nil
	}
	docs, err := LoadConfig(o.ConfigFile)
	if err != nil {
		return nil, nil, nil, err
	}
	if docs.Join != nil {
		return nil, nil, nil, fmt.Errorf("%s: a JoinConfiguration is for `triremeadm join`, not init", o.ConfigFile)
	}
	if docs.Init != nil {
		init = docs.Init
	}
	if docs.Cluster != nil {
		cluster = docs.Cluster
	}
	return init, cluster, docs.Kubelet, nil
}

// changed reports whether the user set flag name in fs; with no fs, none
// was set. Only flags the user set override the file, so that a flag's
// default does not hide the file's value.
func changed(fs *pflag.FlagSet, name string) bool {
	return fs != nil && fs.Changed(name)
}

// applyInitFlags overrides init with the node's flags the user set.
func (o *Init) applyInitFlags(fs *pflag.FlagSet, init *v1alpha1.InitConfiguration) {
	if changed(fs, "apiserver-advertise-address") {
		init.LocalAPIEndpoint.AdvertiseAddress = o.AdvertiseAddress
	}
	if changed(fs, "apiserver-bind-port") {
		init.LocalAPIEndpoint.BindPort = o.BindPort
	}
	if changed(fs, "node-name") {
		init.NodeRegistration.Name = o.NodeName
	}
	if changed(fs, "certificate-key") {
		init.CertificateKey = o.CertificateKey
	}
	if changed(fs, "cri-socket") {
		init.NodeRegistration.CRISocket = o.CRISocket
	}
	if changed(fs, "ignore-preflight-errors") {
		init.NodeRegistration.IgnorePreflightErrors = o.IgnorePreflightErrors
	}
	if changed(fs, "skip-phases") {
		init.SkipPhases = o.SkipPhases
	}
	if changed(fs, "token") || changed(fs, "token-ttl") {
		if len(init.BootstrapTokens) == 0 {
			init.BootstrapTokens = []v1alpha1.BootstrapToken{{}}
		}
		if changed(fs, "token") {
			init.BootstrapTokens[0].Token = o.Token
		}
		if changed(fs, "token-ttl") {
			init.BootstrapTokens[0].TTL = &metav1.Duration{Duration: o.TokenTTL}
		}
	}
}

// applyClusterFlags overrides cluster with the cluster-wide flags the
// user set. --control-plane-vip (a bool, so its default is off) or
// --vip-interface ask for a virtual IP even if the file does not.
func (o *Init) applyClusterFlags(fs *pflag.FlagSet, cluster *v1alpha1.ClusterConfiguration) {
	if changed(fs, "apiserver-cert-extra-sans") {
		cluster.APIServer.CertSANs = o.CertSANs
	}
	if changed(fs, "cert-dir") {
		cluster.CertificatesDir = o.CertDir
	}
	if changed(fs, "control-plane-endpoint") {
		cluster.ControlPlaneEndpoint = o.ControlPlaneEndpoint
	}
	if changed(fs, "kubernetes-version") {
		cluster.KubernetesVersion = o.KubernetesVersion
	}
	if changed(fs, "pod-network-cidr") {
		cluster.Networking.PodSubnet = o.PodCIDR
	}
	if changed(fs, "service-cidr") {
		cluster.Networking.ServiceSubnet = o.ServiceCIDR
	}
	if changed(fs, "service-dns-domain") {
		cluster.Networking.DNSDomain = o.DNSDomain
	}
	if changed(fs, "image-repository") {
		cluster.ImageRepository = o.ImageRepository
	}
	if changed(fs, "cloud-provider") {
		cluster.CloudProvider = o.CloudProvider
	}
	// Snapshots are of a local member: with external etcd these flags have
	// nothing to set.
	if changed(fs, "etcd-snapshot-interval") || changed(fs, "etcd-snapshot-retention") {
		if cluster.Etcd.Local == nil && cluster.Etcd.External == nil {
			cluster.Etcd.Local = &v1alpha1.LocalEtcd{}
		}
		if l := cluster.Etcd.Local; l != nil {
			if changed(fs, "etcd-snapshot-interval") {
				l.Snapshots.Interval = &metav1.Duration{Duration: o.EtcdSnapshotInterval}
			}
			if changed(fs, "etcd-snapshot-retention") {
				r := o.EtcdSnapshotRetention
				l.Snapshots.Retention = &r
			}
		}
	}
	if o.ControlPlaneVIP || changed(fs, "vip-interface") {
		if cluster.VirtualIP == nil {
			cluster.VirtualIP = &v1alpha1.VirtualIP{}
		}
		if changed(fs, "vip-interface") {
			cluster.VirtualIP.Interface = o.VIPInterface
		}
	}
}

// defaultFromEnvironment fills what neither the file, the flags nor the
// static defaults set, from the machine: the node's name (its host name,
// lowercased as a Node name must be), its advertise address and the
// Kubernetes version.
func defaultFromEnvironment(init *v1alpha1.InitConfiguration, cluster *v1alpha1.ClusterConfiguration, env Environment) error {
	if init.NodeRegistration.Name == "" {
		h, err := env.Hostname()
		if err != nil {
			return fmt.Errorf("node name: %w", err)
		}
		init.NodeRegistration.Name = strings.ToLower(h)
	}
	if init.LocalAPIEndpoint.AdvertiseAddress == "" {
		ip, err := env.DefaultAddress()
		if err != nil {
			return fmt.Errorf("advertise address (set --apiserver-advertise-address): %w", err)
		}
		init.LocalAPIEndpoint.AdvertiseAddress = ip.String()
	}
	if cluster.KubernetesVersion == "" {
		cluster.KubernetesVersion = env.DefaultK8sVersion
	}
	return nil
}

// PKIDir is the certificates directory, below the root.
func (c *Config) PKIDir() string { return c.Paths.In(c.Cluster.CertificatesDir) }

// EtcdDataDir is the local etcd member's data directory, below the root.
func (c *Config) EtcdDataDir() string { return c.Paths.In(c.Cluster.Etcd.Local.DataDir) }

// NodeName is this node's name.
func (c *Config) NodeName() string { return c.Init.NodeRegistration.Name }

// AdvertiseAddress is this node's apiserver address.
func (c *Config) AdvertiseAddress() net.IP {
	return net.ParseIP(c.Init.LocalAPIEndpoint.AdvertiseAddress)
}

// LocalURL is this node's apiserver URL.
func (c *Config) LocalURL() string {
	return "https://" + net.JoinHostPort(c.Init.LocalAPIEndpoint.AdvertiseAddress, strconv.Itoa(int(c.Init.LocalAPIEndpoint.BindPort)))
}

// ControlPlaneURL is the control plane's URL: --control-plane-endpoint (its port
// defaulting to the bind port) or this node's apiserver.
func (c *Config) ControlPlaneURL() string {
	e := c.Cluster.ControlPlaneEndpoint
	if e == "" {
		return c.LocalURL()
	}
	if _, _, err := net.SplitHostPort(e); err != nil {
		e = net.JoinHostPort(e, strconv.Itoa(int(c.Init.LocalAPIEndpoint.BindPort)))
	}
	return "https://" + e
}

// controlPlaneHost is the host part of --control-plane-endpoint.
func (c *Config) controlPlaneHost() string {
	e := c.Cluster.ControlPlaneEndpoint
	if h, _, err := net.SplitHostPort(e); err == nil {
		return h
	}
	return e
}

// CertInputs is what the certificates depend on.
func (c *Config) CertInputs() pki.Inputs {
	in := pki.Inputs{
		NodeName:                 c.NodeName(),
		AdvertiseAddress:         c.AdvertiseAddress(),
		ServiceSubnet:            c.Cluster.Networking.ServiceSubnet,
		DNSDomain:                c.Cluster.Networking.DNSDomain,
		ControlPlaneEndpointHost: c.controlPlaneHost(),
		APIServerSANs:            c.Cluster.APIServer.CertSANs,
		ExternalEtcd:             c.Cluster.Etcd.External != nil,
	}
	if l := c.Cluster.Etcd.Local; l != nil {
		in.EtcdServerSANs, in.EtcdPeerSANs = l.ServerCertSANs, l.PeerCertSANs
	}
	return in
}

// KubeconfigInputs is what the kubeconfig files depend on.
func (c *Config) KubeconfigInputs() kubeconfig.Inputs {
	return kubeconfig.Inputs{ClusterName: c.Cluster.ClusterName, NodeName: c.NodeName(),
		ControlPlaneURL: c.ControlPlaneURL(), LocalURL: c.LocalURL(), VIPManager: c.Cluster.VirtualIP != nil,
		CloudControllerManager: c.ExternalCloudProvider()}
}

// EtcdSnapshots returns the local member's snapshot schedule, and whether
// snapshots are taken at all.
func (c *Config) EtcdSnapshots() (v1alpha1.EtcdSnapshots, bool) {
	l := c.Cluster.Etcd.Local
	if l == nil || l.Snapshots.Interval == nil || l.Snapshots.Interval.Duration == 0 {
		return v1alpha1.EtcdSnapshots{}, false
	}
	return l.Snapshots, true
}

// ExternalCloudProvider reports whether the cluster runs
// trireme-cloud-controller-manager and its kubelets --cloud-provider=external.
func (c *Config) ExternalCloudProvider() bool {
	return c.Cluster.CloudProvider == v1alpha1.CloudProviderExternal
}

// Image returns the reference of the Trireme image name at the cluster's version.
func (c *Config) Image(name string) string {
	return c.Cluster.ImageRepository + "/" + name + ":" + c.Cluster.KubernetesVersion
}

// DefaultRouteAddress returns the first global IPv4 address of the interface that
// holds the IPv4 default route (kubeadm's default advertise address).
func DefaultRouteAddress() (net.IP, error) {
	f, err := os.Open("/proc/net/route")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	var iface string
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) > 2 && fields[1] == "00000000" && fields[0] != "Iface" {
			iface = fields[0]
			break
		}
	}
	if iface == "" {
		return nil, fmt.Errorf("no IPv4 default route")
	}
	i, err := net.InterfaceByName(iface)
	if err != nil {
		return nil, err
	}
	addrs, err := i.Addrs()
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.To4(), nil
		}
	}
	return nil, fmt.Errorf("interface %s of the default route has no IPv4 address", iface)
}
