package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GroupName is the API group of triremeadm's configuration kinds.
const GroupName = "triremeadm.config.trireme.dev"

// Version is the only version of the group so far.
const Version = "v1alpha1"

// APIVersion is the apiVersion every document of this group carries.
const APIVersion = GroupName + "/" + Version

// The kinds of the group.
const (
	KindInitConfiguration    = "InitConfiguration"
	KindClusterConfiguration = "ClusterConfiguration"
	KindJoinConfiguration    = "JoinConfiguration"
)

// InitConfiguration is what `triremeadm init` needs about this node and its first
// bootstrap tokens; it is not stored in the cluster.
type InitConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// BootstrapTokens are created by the bootstrap-token phase; by default one token
	// valid for 24h for signing and authentication.
	BootstrapTokens []BootstrapToken `json:"bootstrapTokens,omitempty"`
	// NodeRegistration describes this node.
	NodeRegistration NodeRegistrationOptions `json:"nodeRegistration,omitempty"`
	// LocalAPIEndpoint is where this node's apiserver listens.
	LocalAPIEndpoint APIEndpoint `json:"localAPIEndpoint,omitempty"`
	// SkipPhases lists the phases `init` leaves out, as --skip-phases does.
	SkipPhases []string `json:"skipPhases,omitempty"`
	// CertificateKey is the hex-encoded 32-byte AES key the upload-certs phase
	// encrypts the shared certificates and keys with in kube-system/kubeadm-certs;
	// empty means a random one (--certificate-key).
	CertificateKey string `json:"certificateKey,omitempty"`
}

// ClusterConfiguration is the cluster-wide configuration; the upload-config phase
// stores it in kube-system/triremeadm-config.
type ClusterConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// KubernetesVersion selects the images (trireme.dev/<name>:<version>); it defaults
	// to triremeadm's own version.
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// ControlPlaneEndpoint is a stable host[:port] for the control plane (a DNS name or
	// a load balancer); it goes into the apiserver certificate's SANs and every
	// kubeconfig. Empty means the first node's advertise address and port.
	ControlPlaneEndpoint string `json:"controlPlaneEndpoint,omitempty"`
	// ClusterName names the cluster in kubeconfigs; default "trireme".
	ClusterName string `json:"clusterName,omitempty"`
	// CertificatesDir holds the cluster's PKI; default /etc/trireme/pki.
	CertificatesDir string `json:"certificatesDir,omitempty"`
	// ImageRepository prefixes every image; default "trireme.dev".
	ImageRepository string `json:"imageRepository,omitempty"`
	// Networking holds the cluster's address ranges and DNS domain.
	Networking Networking `json:"networking,omitempty"`
	// Etcd configures the local etcd member or an external cluster.
	Etcd Etcd `json:"etcd,omitempty"`
	// VirtualIP, when set, runs a leader-elected virtual-IP manager as a static pod
	// on every control-plane node, holding the host of ControlPlaneEndpoint (which
	// must then be an IP address) on the node whose manager holds the lease.
	VirtualIP *VirtualIP `json:"virtualIP,omitempty"`
	// APIServer configures the apiserver static pod and its certificate.
	APIServer APIServer `json:"apiServer,omitempty"`
	// ControllerManager configures the controller-manager static pod.
	ControllerManager ControlPlaneComponent `json:"controllerManager,omitempty"`
	// Scheduler configures the scheduler static pod.
	Scheduler ControlPlaneComponent `json:"scheduler,omitempty"`
	// CloudProvider is "external" to run trireme-cloud-controller-manager as a
	// static pod on every control-plane node and start every kubelet with
	// --cloud-provider=external; empty (the default) runs none.
	CloudProvider string `json:"cloudProvider,omitempty"`
	// CloudControllerManager configures the cloud-controller-manager static
	// pod, when CloudProvider is "external".
	CloudControllerManager CloudControllerManager `json:"cloudControllerManager,omitempty"`
	// Addons configures the trireme-addons Helm release init's addon phase
	// installs.
	Addons Addons `json:"addons,omitempty"`
}

// Addons configures the trireme-addons chart's release.
type Addons struct {
	// Values are values of the chart, as a values.yaml holds them (for example
	// {"flannel": {"backend": "host-gw"}} or {"coredns": {"enabled": false}}).
	// They are merged over the global values triremeadm derives from this
	// configuration; the chart's schema refuses unknown keys and wrong types.
	Values map[string]any `json:"values,omitempty"`
}

// Networking holds the cluster's address ranges.
type Networking struct {
	// ServiceSubnet is the Service ClusterIP range; default 10.96.0.0/12.
	ServiceSubnet string `json:"serviceSubnet,omitempty"`
	// PodSubnet is the range node pod CIDRs are allocated from; default 10.244.0.0/16.
	PodSubnet string `json:"podSubnet,omitempty"`
	// DNSDomain is the cluster's DNS domain; default cluster.local.
	DNSDomain string `json:"dnsDomain,omitempty"`
}

// Etcd is either a local member run as a static pod or an external cluster; exactly
// one of the two is set after defaulting.
type Etcd struct {
	// Local runs an etcd member on each control-plane node.
	Local *LocalEtcd `json:"local,omitempty"`
	// External points the apiserver at an existing etcd cluster.
	External *ExternalEtcd `json:"external,omitempty"`
}

// LocalEtcd configures the etcd static pod.
type LocalEtcd struct {
	// DataDir is etcd's data directory; default /var/lib/trireme/etcd.
	DataDir string `json:"dataDir,omitempty"`
	// ExtraArgs are added to etcd's command line and override triremeadm's own flags
	// of the same name.
	ExtraArgs []Arg `json:"extraArgs,omitempty"`
	// ServerCertSANs are extra SANs for the etcd server certificate.
	ServerCertSANs []string `json:"serverCertSANs,omitempty"`
	// PeerCertSANs are extra SANs for the etcd peer certificate.
	PeerCertSANs []string `json:"peerCertSANs,omitempty"`
	// Snapshots schedules snapshots of the member on every control-plane node.
	Snapshots EtcdSnapshots `json:"snapshots,omitempty"`
}

// EtcdSnapshots schedules snapshots of the local etcd member: every
// control-plane node runs the etcd-snapshot static pod, which writes one each
// Interval into Dir, named with the node and the time, and keeps the newest
// Retention of its own (as k3s schedules them).
type EtcdSnapshots struct {
	// Interval is the time between snapshots; default 12h; 0 turns them off.
	Interval *metav1.Duration `json:"interval,omitempty"`
	// Retention is how many of this node's snapshots are kept; default 5.
	Retention *int32 `json:"retention,omitempty"`
	// Dir is the directory they are written to; default
	// /var/lib/trireme/etcd-snapshots.
	Dir string `json:"dir,omitempty"`
}

// ExternalEtcd is an etcd cluster triremeadm does not manage.
type ExternalEtcd struct {
	// Endpoints are the client URLs of the cluster.
	Endpoints []string `json:"endpoints"`
	// CAFile verifies the members' serving certificates.
	CAFile string `json:"caFile,omitempty"`
	// CertFile and KeyFile are the apiserver's client certificate.
	CertFile string `json:"certFile,omitempty"`
	// KeyFile is the key of CertFile.
	KeyFile string `json:"keyFile,omitempty"`
}

// APIServer configures the apiserver.
type APIServer struct {
	ControlPlaneComponent `json:",inline"`
	// CertSANs are extra SANs (names or IPs) for the serving certificate.
	CertSANs []string `json:"certSANs,omitempty"`
}

// ControlPlaneComponent holds what every control-plane static pod can be given.
type ControlPlaneComponent struct {
	// ExtraArgs are added to the command line and override triremeadm's own flags of
	// the same name.
	ExtraArgs []Arg `json:"extraArgs,omitempty"`
}

// CloudControllerManager configures trireme-cloud-controller-manager.
type CloudControllerManager struct {
	ControlPlaneComponent `json:",inline"`
	// CloudConfig is its --cloud-config file (a CloudConfiguration of
	// cloudconfig.config.trireme.dev/v1alpha1), re-read when it changes;
	// default /etc/trireme/cloud/cloud-config.yaml. triremeadm writes an
	// empty one there when there is none.
	CloudConfig string `json:"cloudConfig,omitempty"`
}

// CloudProviderExternal is the only CloudProvider value besides empty.
const CloudProviderExternal = "external"

// Arg is one command-line flag, --name=value; as in kubeadm v1beta4 a list keeps
// order and lets a flag repeat.
type Arg struct {
	// Name is the flag name without dashes.
	Name string `json:"name"`
	// Value is the flag's value.
	Value string `json:"value"`
}

// NodeRegistrationOptions describes the node triremeadm registers.
type NodeRegistrationOptions struct {
	// Name is the Node's name; default the host name, lower-cased.
	Name string `json:"name,omitempty"`
	// CRISocket is the container runtime's endpoint; default
	// unix:///run/containerd/containerd.sock.
	CRISocket string `json:"criSocket,omitempty"`
	// Taints are set on the Node; nil means the control-plane taint on a control-plane
	// node (none for --single-node), an empty list means none.
	Taints []Taint `json:"taints,omitempty"`
	// KubeletExtraArgs are added to the kubelet's command line.
	KubeletExtraArgs []Arg `json:"kubeletExtraArgs,omitempty"`
	// IgnorePreflightErrors lists preflight check names whose errors become warnings;
	// "all" ignores every one.
	IgnorePreflightErrors []string `json:"ignorePreflightErrors,omitempty"`
}

// Taint is a Node taint.
type Taint struct {
	// Key is the taint key.
	Key string `json:"key"`
	// Value is the taint value.
	Value string `json:"value,omitempty"`
	// Effect is NoSchedule, PreferNoSchedule or NoExecute.
	Effect string `json:"effect"`
}

// APIEndpoint is an apiserver's advertise address and port.
type APIEndpoint struct {
	// AdvertiseAddress is the IP the apiserver advertises; default the address of the
	// interface holding the default route.
	AdvertiseAddress string `json:"advertiseAddress,omitempty"`
	// BindPort is the apiserver's secure port; default 6443.
	BindPort int32 `json:"bindPort,omitempty"`
}

// BootstrapToken is a token nodes use to join (a bootstrap.kubernetes.io/token Secret).
type BootstrapToken struct {
	// Token is "[a-z0-9]{6}.[a-z0-9]{16}"; empty means generate one.
	Token string `json:"token,omitempty"`
	// Description says what the token is for.
	Description string `json:"description,omitempty"`
	// TTL is how long the token lives; default 24h, 0 means forever.
	TTL *metav1.Duration `json:"ttl,omitempty"`
	// Usages are "signing" and/or "authentication"; default both.
	Usages []string `json:"usages,omitempty"`
	// Groups are extra groups the token authenticates as; default
	// system:bootstrappers:kubeadm:default-node-token.
	Groups []string `json:"groups,omitempty"`
}

// JoinConfiguration is what `triremeadm join` needs.
type JoinConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// NodeRegistration describes the joining node.
	NodeRegistration NodeRegistrationOptions `json:"nodeRegistration,omitempty"`
	// CACertPath is where the cluster CA is written; default /etc/trireme/pki/ca.crt.
	CACertPath string `json:"caCertPath,omitempty"`
	// Discovery says how the node finds and trusts the cluster.
	Discovery Discovery `json:"discovery"`
	// SkipPhases lists the phases `join` leaves out.
	SkipPhases []string `json:"skipPhases,omitempty"`
	// ControlPlane, when set, makes the node a control-plane node: it runs an etcd
	// member and the control-plane static pods.
	ControlPlane *JoinControlPlane `json:"controlPlane,omitempty"`
}

// JoinControlPlane is what a joining control-plane node needs.
type JoinControlPlane struct {
	// LocalAPIEndpoint is where this node's apiserver listens; its address defaults
	// to the node IP.
	LocalAPIEndpoint APIEndpoint `json:"localAPIEndpoint,omitempty"`
	// CertificateKey decrypts the shared certificates and keys that
	// `init --upload-certs` stored in kube-system/kubeadm-certs.
	CertificateKey string `json:"certificateKey,omitempty"`
}

// VirtualIP configures the control plane's virtual-IP manager.
type VirtualIP struct {
	// Interface carries the address on every control-plane node; empty means the
	// interface holding the node's own address.
	Interface string `json:"interface,omitempty"`
}

// Discovery says how a joining node finds and trusts the cluster.
type Discovery struct {
	// BootstrapToken discovers the cluster through kube-public/cluster-info.
	BootstrapToken *BootstrapTokenDiscovery `json:"bootstrapToken,omitempty"`
	// TLSBootstrapToken is the token the kubelet authenticates with to request its
	// certificate; default BootstrapToken.Token.
	TLSBootstrapToken string `json:"tlsBootstrapToken,omitempty"`
	// Timeout bounds discovery; default 5m.
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// BootstrapTokenDiscovery is discovery through a bootstrap token.
type BootstrapTokenDiscovery struct {
	// Token is the bootstrap token.
	Token string `json:"token"`
	// APIServerEndpoint is host:port of an apiserver.
	APIServerEndpoint string `json:"apiServerEndpoint"`
	// CACertHashes pin the cluster CA: "sha256:<hex of the SubjectPublicKeyInfo>".
	CACertHashes []string `json:"caCertHashes,omitempty"`
	// UnsafeSkipCAVerification trusts whatever CA cluster-info names.
	UnsafeSkipCAVerification bool `json:"unsafeSkipCAVerification,omitempty"`
}
