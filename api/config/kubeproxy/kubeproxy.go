package kubeproxy

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"
	"k8s.io/utils/ptr"
)

// Modes as upstream's configuration names them. ModeDefault ("") means
// iptables on Linux, as it does for kube-proxy, so existing files keep
// their meaning.
const (
	ModeDefault  kubeproxyv1alpha1.ProxyMode = ""
	ModeIPTables kubeproxyv1alpha1.ProxyMode = "iptables"
	ModeNFTables kubeproxyv1alpha1.ProxyMode = "nftables"
	ModeIPVS     kubeproxyv1alpha1.ProxyMode = "ipvs"
)

// Local traffic detection modes (detectLocalMode).
const (
	LocalModeClusterCIDR kubeproxyv1alpha1.LocalMode = "ClusterCIDR"
	LocalModeNodeCIDR    kubeproxyv1alpha1.LocalMode = "NodeCIDR"
)

// NodePortAddressesPrimary is the nodePortAddresses value that means "the
// node's primary IPs".
const NodePortAddressesPrimary = "primary"

// Scheme knows the one kind the proxy's --config accepts.
var Scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := kubeproxyv1alpha1.AddToScheme(s); err != nil {
		panic(fmt.Sprintf("install %s: %v", kubeproxyv1alpha1.SchemeGroupVersion, err))
	}
	return s
}()

// Default returns the configuration with every default applied, as if read
// from a file naming only the kind.
func Default() *kubeproxyv1alpha1.KubeProxyConfiguration {
	cfg := &kubeproxyv1alpha1.KubeProxyConfiguration{}
	SetDefaults(cfg)
	return cfg
}

// SetDefaults fills unset fields with upstream kube-proxy's defaults. Mode
// is left as it is: "" already means iptables.
func SetDefaults(cfg *kubeproxyv1alpha1.KubeProxyConfiguration) {
	if cfg.BindAddress == "" {
		cfg.BindAddress = "0.0.0.0"
	}
	if cfg.HealthzBindAddress == "" {
		cfg.HealthzBindAddress = "0.0.0.0:10256"
	} else {
		cfg.HealthzBindAddress = appendPort(cfg.HealthzBindAddress, 10256)
	}
	if cfg.MetricsBindAddress == "" {
		cfg.MetricsBindAddress = "127.0.0.1:10249"
	} else {
		cfg.MetricsBindAddress = appendPort(cfg.MetricsBindAddress, 10249)
	}
	defaultSync := func(masq **int32, sync, minSync *metav1.Duration) {
		if masq != nil && *masq == nil {
			*masq = ptr.To[int32](14)
		}
		if sync.Duration == 0 {
			sync.Duration = 30 * time.Second
		}
		if minSync.Duration == 0 {
			minSync.Duration = time.Second
		}
	}
	defaultSync(&cfg.IPTables.MasqueradeBit, &cfg.IPTables.SyncPeriod, &cfg.IPTables.MinSyncPeriod)
	defaultSync(&cfg.NFTables.MasqueradeBit, &cfg.NFTables.SyncPeriod, &cfg.NFTables.MinSyncPeriod)
	defaultSync(nil, &cfg.IPVS.SyncPeriod, &cfg.IPVS.MinSyncPeriod)
	if cfg.IPTables.LocalhostNodePorts == nil {
		cfg.IPTables.LocalhostNodePorts = ptr.To(true)
	}
	if cfg.OOMScoreAdj == nil {
		cfg.OOMScoreAdj = ptr.To[int32](-999)
	}
	if cfg.Conntrack.MaxPerCore == nil {
		cfg.Conntrack.MaxPerCore = ptr.To[int32](32 * 1024)
	}
	if cfg.Conntrack.Min == nil {
		cfg.Conntrack.Min = ptr.To[int32](128 * 1024)
	}
	if cfg.Conntrack.TCPEstablishedTimeout == nil {
		cfg.Conntrack.TCPEstablishedTimeout = &metav1.Duration{Duration: 24 * time.Hour}
	}
	if cfg.Conntrack.TCPCloseWaitTimeout == nil {
		cfg.Conntrack.TCPCloseWaitTimeout = &metav1.Duration{Duration: time.Hour}
	}
	if cfg.ConfigSyncPeriod.Duration == 0 {
		cfg.ConfigSyncPeriod.Duration = 15 * time.Minute
	}
	if cfg.ClientConnection.ContentType == "" {
		cfg.ClientConnection.ContentType = "application/vnd.kubernetes.protobuf"
	}
	if cfg.ClientConnection.QPS == 0 {
		cfg.ClientConnection.QPS = 5
	}
	if cfg.ClientConnection.Burst == 0 {
		cfg.ClientConnection.Burst = 10
	}
	if cfg.FeatureGates == nil {
		cfg.FeatureGates = map[string]bool{}
	}
	if cfg.DetectLocalMode == "" {
		cfg.DetectLocalMode = LocalModeClusterCIDR
	}
	if cfg.Logging.Format == "" {
		cfg.Logging.Format = "text"
	}
}

// appendPort adds port to an address given without one, as upstream does
// for healthzBindAddress and metricsBindAddress.
func appendPort(addr string, port int) string {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr
	}
	if ip, err := netip.ParseAddr(addr); err == nil {
		return net.JoinHostPort(ip.String(), strconv.Itoa(port))
	}
	return addr
}

// ActiveSync returns the masquerade bit and sync periods of the mode cfg
// selects (the iptables section for ModeDefault).
func ActiveSync(cfg *kubeproxyv1alpha1.KubeProxyConfiguration) (masqueradeBit int32, syncPeriod, minSyncPeriod time.Duration) {
	if cfg.Mode == ModeNFTables {
		return ptr.Deref(cfg.NFTables.MasqueradeBit, 14), cfg.NFTables.SyncPeriod.Duration, cfg.NFTables.MinSyncPeriod.Duration
	}
	return ptr.Deref(cfg.IPTables.MasqueradeBit, 14), cfg.IPTables.SyncPeriod.Duration, cfg.IPTables.MinSyncPeriod.Duration
}

// Validate checks a defaulted configuration. Besides upstream's rules it
// refuses the modes trireme-proxy does not implement (ipvs: the module is
// absent from the kernels Trireme targets; kernelspace: Windows).
func Validate(cfg *kubeproxyv1alpha1.KubeProxyConfiguration) field.ErrorList {
	var errs field.ErrorList
	root := field.NewPath("KubeProxyConfiguration")
	switch cfg.Mode {
	case ModeDefault, ModeIPTables, ModeNFTables:
	case ModeIPVS:
		errs = append(errs, field.NotSupported(root.Child("mode"), cfg.Mode, []string{"iptables", "nftables"}))
	default:
		errs = append(errs, field.NotSupported(root.Child("mode"), cfg.Mode, []string{"", "iptables", "nftables"}))
	}
	errs = append(errs, validateSync(root.Child("iptables"), cfg.IPTables.MasqueradeBit, cfg.IPTables.SyncPeriod, cfg.IPTables.MinSyncPeriod)...)
	errs = append(errs, validateSync(root.Child("nftables"), cfg.NFTables.MasqueradeBit, cfg.NFTables.SyncPeriod, cfg.NFTables.MinSyncPeriod)...)
	if cfg.ConfigSyncPeriod.Duration <= 0 {
		errs = append(errs, field.Invalid(root.Child("configSyncPeriod"), cfg.ConfigSyncPeriod, "must be greater than 0"))
	}
	if _, err := netip.ParseAddr(cfg.BindAddress); err != nil {
		errs = append(errs, field.Invalid(root.Child("bindAddress"), cfg.BindAddress, "not a valid textual representation of an IP address"))
	}
	if cfg.HealthzBindAddress != "" {
		errs = append(errs, validateHostPort(root.Child("healthzBindAddress"), cfg.HealthzBindAddress)...)
	}
	if cfg.MetricsBindAddress != "" {
		errs = append(errs, validateHostPort(root.Child("metricsBindAddress"), cfg.MetricsBindAddress)...)
	}
	if cfg.ClusterCIDR != "" {
		errs = append(errs, validateDualStackCIDRs(root.Child("clusterCIDR"), strings.Split(cfg.ClusterCIDR, ","))...)
	}
	for i, a := range cfg.NodePortAddresses {
		if a == NodePortAddressesPrimary {
			if len(cfg.NodePortAddresses) != 1 {
				errs = append(errs, field.Invalid(root.Child("nodePortAddresses").Index(i), a, "'primary' must be the only value"))
			}
			continue
		}
		if _, err := netip.ParsePrefix(a); err != nil {
			errs = append(errs, field.Invalid(root.Child("nodePortAddresses").Index(i), a, "must be a valid CIDR or 'primary'"))
		}
	}
	if cfg.OOMScoreAdj != nil && (*cfg.OOMScoreAdj < -1000 || *cfg.OOMScoreAdj > 1000) {
		errs = append(errs, field.Invalid(root.Child("oomScoreAdj"), *cfg.OOMScoreAdj, "must be within the range [-1000, 1000]"))
	}
	if cfg.ClientConnection.QPS < 0 {
		errs = append(errs, field.Invalid(root.Child("clientConnection", "qps"), cfg.ClientConnection.QPS, "must be greater than or equal to 0"))
	}
	if cfg.ClientConnection.Burst < 0 {
		errs = append(errs, field.Invalid(root.Child("clientConnection", "burst"), cfg.ClientConnection.Burst, "must be greater than or equal to 0"))
	}
	switch cfg.DetectLocalMode {
	case LocalModeClusterCIDR, LocalModeNodeCIDR:
	default:
		errs = append(errs, field.NotSupported(root.Child("detectLocalMode"), cfg.DetectLocalMode, []string{string(LocalModeClusterCIDR), string(LocalModeNodeCIDR)}))
	}
	return errs
}

func validateSync(p *field.Path, masq *int32, sync, minSync metav1.Duration) field.ErrorList {
	var errs field.ErrorList
	if masq != nil && (*masq < 0 || *masq > 31) {
		errs = append(errs, field.Invalid(p.Child("masqueradeBit"), *masq, "must be within the range [0, 31]"))
	}
	if sync.Duration <= 0 {
		errs = append(errs, field.Invalid(p.Child("syncPeriod"), sync, "must be greater than 0"))
	}
	if minSync.Duration < 0 {
		errs = append(errs, field.Invalid(p.Child("minSyncPeriod"), minSync, "must be greater than or equal to 0"))
	}
	if sync.Duration > 0 && minSync.Duration > sync.Duration {
		errs = append(errs, field.Invalid(p.Child("minSyncPeriod"), minSync, fmt.Sprintf("must be less than or equal to %s", p.Child("syncPeriod"))))
	}
	return errs
}

func validateHostPort(p *field.Path, s string) field.ErrorList {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return field.ErrorList{field.Invalid(p, s, "must be IP:port")}
	}
	var errs field.ErrorList
	if _, err := netip.ParseAddr(host); err != nil {
		errs = append(errs, field.Invalid(p, host, "must be a valid IP"))
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		errs = append(errs, field.Invalid(p, port, "must be a valid port"))
	}
	return errs
}

// validateDualStackCIDRs allows one CIDR, or two of different families.
func validateDualStackCIDRs(p *field.Path, cidrs []string) field.ErrorList {
	var errs field.ErrorList
	if len(cidrs) > 2 {
		return field.ErrorList{field.Invalid(p, strings.Join(cidrs, ","), "may contain at most one CIDR per IP family")}
	}
	var families []bool
	for i, c := range cidrs {
		pfx, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			errs = append(errs, field.Invalid(p.Index(i), c, "must be a valid CIDR"))
			continue
		}
		families = append(families, pfx.Addr().Is4())
	}
	if len(families) == 2 && families[0] == families[1] {
		errs = append(errs, field.Invalid(p, strings.Join(cidrs, ","), "may contain at most one CIDR per IP family"))
	}
	return errs
}
