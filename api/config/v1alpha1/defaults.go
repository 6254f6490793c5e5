package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Static defaults. Values that depend on the machine — the node name, the advertise
// address, the Kubernetes version — are filled by triremeadm itself after these, as
// kubeadm's "dynamic defaults" are.
const (
	DefaultClusterName     = "trireme"
	DefaultCertificatesDir = "/etc/trireme/pki"
	DefaultImageRepository = "trireme.dev"
	DefaultServiceSubnet   = "10.96.0.0/12"
	DefaultPodSubnet       = "10.244.0.0/16"
	DefaultDNSDomain       = "cluster.local"
	DefaultEtcdDataDir     = "/var/lib/trireme/etcd"
	// DefaultEtcdSnapshotInterval, DefaultEtcdSnapshotRetention and
	// DefaultEtcdSnapshotDir are k3s's schedule: every 12 hours, keep 5.
	DefaultEtcdSnapshotInterval  = 12 * time.Hour
	DefaultEtcdSnapshotRetention = int32(5)
	DefaultEtcdSnapshotDir       = "/var/lib/trireme/etcd-snapshots"
	DefaultCRISocket             = "unix:///run/containerd/containerd.sock"
	DefaultAPIBindPort           = int32(6443)
	DefaultTokenTTL              = 24 * time.Hour
	DefaultDiscoveryTimeout      = 5 * time.Minute
	DefaultCACertPath            = "/etc/trireme/pki/ca.crt"
	DefaultNodeBootstrapGroup    = "system:bootstrappers:kubeadm:default-node-token"
	DefaultCloudConfig           = "/etc/trireme/cloud/cloud-config.yaml"
)

// DefaultTokenUsages are a bootstrap token's usages when none are given.
var DefaultTokenUsages = []string{"signing", "authentication"}

func setTypeMeta(tm *metav1.TypeMeta, kind string) {
	if tm.APIVersion == "" {
		tm.APIVersion = APIVersion
	}
	if tm.Kind == "" {
		tm.Kind = kind
	}
}

// SetDefaultsInitConfiguration fills the unset static fields of c.
func SetDefaultsInitConfiguration(c *InitConfiguration) {
	setTypeMeta(&c.TypeMeta, KindInitConfiguration)
	if c.BootstrapTokens == nil {
		c.BootstrapTokens = []BootstrapToken{{}}
	}
	for i := range c.BootstrapTokens {
		SetDefaultsBootstrapToken(&c.BootstrapTokens[i])
	}
	setDefaultsNodeRegistration(&c.NodeRegistration)
	if c.LocalAPIEndpoint.BindPort == 0 {
		c.LocalAPIEndpoint.BindPort = DefaultAPIBindPort
	}
}

// SetDefaultsBootstrapToken fills a token's TTL, usages and groups.
func SetDefaultsBootstrapToken(t *BootstrapToken) {
	if t.TTL == nil {
		t.TTL = &metav1.Duration{Duration: DefaultTokenTTL}
	}
	if len(t.Usages) == 0 {
		t.Usages = append([]string(nil), DefaultTokenUsages...)
	}
	if len(t.Groups) == 0 {
		t.Groups = []string{DefaultNodeBootstrapGroup}
	}
}

func setDefaultsNodeRegistration(n *NodeRegistrationOptions) {
	if n.CRISocket == "" {
		n.CRISocket = DefaultCRISocket
	}
}

// SetDefaultsClusterConfiguration fills the unset static fields of c.
func SetDefaultsClusterConfiguration(c *ClusterConfiguration) {
	setTypeMeta(&c.TypeMeta, KindClusterConfiguration)
	if c.ClusterName == "" {
		c.ClusterName = DefaultClusterName
	}
	if c.CertificatesDir == "" {
		c.CertificatesDir = DefaultCertificatesDir
	}
	if c.ImageRepository == "" {
		c.ImageRepository = DefaultImageRepository
	}
	if c.Networking.ServiceSubnet == "" {
		c.Networking.ServiceSubnet = DefaultServiceSubnet
	}
	if c.Networking.PodSubnet == "" {
		c.Networking.PodSubnet = DefaultPodSubnet
	}
	if c.Networking.DNSDomain == "" {
		c.Networking.DNSDomain = DefaultDNSDomain
	}
	if c.Etcd.Local == nil && c.Etcd.External == nil {
		c.Etcd.Local = &LocalEtcd{}
	}
	if c.Etcd.Local != nil && c.Etcd.Local.DataDir == "" {
		c.Etcd.Local.DataDir = DefaultEtcdDataDir
	}
	if c.Etcd.Local != nil {
		sn := &c.Etcd.Local.Snapshots
		if sn.Interval == nil {
			sn.Interval = &metav1.Duration{Duration: DefaultEtcdSnapshotInterval}
		}
		if sn.Retention == nil {
			r := DefaultEtcdSnapshotRetention
			sn.Retention = &r
		}
		if sn.Dir == "" {
			sn.Dir = DefaultEtcdSnapshotDir
		}
	}
	if c.CloudProvider == CloudProviderExternal && c.CloudControllerManager.CloudConfig == "" {
		c.CloudControllerManager.CloudConfig = DefaultCloudConfig
	}
}

// SetDefaultsJoinConfiguration fills the unset static fields of c.
func SetDefaultsJoinConfiguration(c *JoinConfiguration) {
	setTypeMeta(&c.TypeMeta, KindJoinConfiguration)
	setDefaultsNodeRegistration(&c.NodeRegistration)
	if c.CACertPath == "" {
		c.CACertPath = DefaultCACertPath
	}
	if c.Discovery.Timeout == nil {
		c.Discovery.Timeout = &metav1.Duration{Duration: DefaultDiscoveryTimeout}
	}
	if c.ControlPlane != nil && c.ControlPlane.LocalAPIEndpoint.BindPort == 0 {
		c.ControlPlane.LocalAPIEndpoint.BindPort = DefaultAPIBindPort
	}
	if c.Discovery.TLSBootstrapToken == "" && c.Discovery.BootstrapToken != nil {
		c.Discovery.TLSBootstrapToken = c.Discovery.BootstrapToken.Token
	}
}
