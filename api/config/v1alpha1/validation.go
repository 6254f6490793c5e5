package v1alpha1

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// tokenRE is the bootstrap token format: "<id>.<secret>".
var tokenRE = regexp.MustCompile(`^[a-z0-9]{6}\.[a-z0-9]{16}$`)

// caHashRE is a pinned CA public key hash.
var caHashRE = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)

// certKeyRE matches a certificate key: 32 bytes, hex-encoded.
var certKeyRE = regexp.MustCompile(`^[a-f0-9]{64}$`)

// ValidateInitConfiguration checks a defaulted InitConfiguration.
func ValidateInitConfiguration(c *InitConfiguration) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateTypeMeta(c.APIVersion, c.Kind, KindInitConfiguration)...)
	for i := range c.BootstrapTokens {
		errs = append(errs, ValidateBootstrapToken(&c.BootstrapTokens[i], field.NewPath("bootstrapTokens").Index(i))...)
	}
	errs = append(errs, validateNodeRegistration(&c.NodeRegistration, field.NewPath("nodeRegistration"))...)
	p := field.NewPath("localAPIEndpoint")
	if a := c.LocalAPIEndpoint.AdvertiseAddress; a != "" && net.ParseIP(a) == nil {
		errs = append(errs, field.Invalid(p.Child("advertiseAddress"), a, "must be an IP address"))
	}
	errs = append(errs, validatePort(c.LocalAPIEndpoint.BindPort, p.Child("bindPort"))...)
	errs = append(errs, validateCertificateKey(c.CertificateKey, field.NewPath("certificateKey"))...)
	return errs
}

// validateCertificateKey checks an optional hex-encoded 32-byte key.
func validateCertificateKey(k string, p *field.Path) field.ErrorList {
	if k == "" || certKeyRE.MatchString(k) {
		return nil
	}
	return field.ErrorList{field.Invalid(p, "<redacted>", "must be 64 lower-case hex digits (a 32-byte AES key)")}
}

// ValidateClusterConfiguration checks a defaulted ClusterConfiguration.
func ValidateClusterConfiguration(c *ClusterConfiguration) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateTypeMeta(c.APIVersion, c.Kind, KindClusterConfiguration)...)
	if e := c.ControlPlaneEndpoint; e != "" {
		if err := validateHostPort(e, true); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("controlPlaneEndpoint"), e, err.Error()))
		}
	}
	if c.VirtualIP != nil {
		host := c.ControlPlaneEndpoint
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if ip := net.ParseIP(host); ip == nil || ip.To4() == nil {
			errs = append(errs, field.Invalid(field.NewPath("virtualIP"), host, "the virtual IP is controlPlaneEndpoint's host, which must be an IPv4 address"))
		}
	}
	if !strings.HasPrefix(c.CertificatesDir, "/") {
		errs = append(errs, field.Invalid(field.NewPath("certificatesDir"), c.CertificatesDir, "must be an absolute path"))
	}
	if c.KubernetesVersion != "" && !strings.HasPrefix(c.KubernetesVersion, "v") {
		errs = append(errs, field.Invalid(field.NewPath("kubernetesVersion"), c.KubernetesVersion, `must start with "v"`))
	}
	for _, msg := range validation.IsDNS1123Subdomain(c.ClusterName) {
		errs = append(errs, field.Invalid(field.NewPath("clusterName"), c.ClusterName, msg))
	}
	np := field.NewPath("networking")
	svc := validateCIDR(c.Networking.ServiceSubnet, np.Child("serviceSubnet"))
	errs = append(errs, svc...)
	if len(svc) == 0 {
		_, n, _ := net.ParseCIDR(c.Networking.ServiceSubnet)
		if ones, bits := n.Mask.Size(); bits-ones > 20 {
			errs = append(errs, field.Invalid(np.Child("serviceSubnet"), c.Networking.ServiceSubnet, "must be no larger than /12 (IPv4) or 20 host bits"))
		}
	}
	errs = append(errs, validateCIDR(c.Networking.PodSubnet, np.Child("podSubnet"))...)
	for _, msg := range validation.IsDNS1123Subdomain(c.Networking.DNSDomain) {
		errs = append(errs, field.Invalid(np.Child("dnsDomain"), c.Networking.DNSDomain, msg))
	}
	ep := field.NewPath("etcd")
	switch {
	case c.Etcd.Local != nil && c.Etcd.External != nil:
		errs = append(errs, field.Invalid(ep, "local and external", "set only one of local and external"))
	case c.Etcd.Local != nil:
		if !strings.HasPrefix(c.Etcd.Local.DataDir, "/") {
			errs = append(errs, field.Invalid(ep.Child("local", "dataDir"), c.Etcd.Local.DataDir, "must be an absolute path"))
		}
		errs = append(errs, validateArgs(c.Etcd.Local.ExtraArgs, ep.Child("local", "extraArgs"))...)
		errs = append(errs, validateSANs(c.Etcd.Local.ServerCertSANs, ep.Child("local", "serverCertSANs"))...)
		errs = append(errs, validateEtcdSnapshots(&c.Etcd.Local.Snapshots, ep.Child("local", "snapshots"))...)
		errs = append(errs, validateSANs(c.Etcd.Local.PeerCertSANs, ep.Child("local", "peerCertSANs"))...)
	case c.Etcd.External != nil:
		xp := ep.Child("external")
		if len(c.Etcd.External.Endpoints) == 0 {
			errs = append(errs, field.Required(xp.Child("endpoints"), "at least one etcd URL"))
		}
		for i, e := range c.Etcd.External.Endpoints {
			if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				errs = append(errs, field.Invalid(xp.Child("endpoints").Index(i), e, "must be an http or https URL"))
			}
		}
		if (c.Etcd.External.CertFile == "") != (c.Etcd.External.KeyFile == "") {
			errs = append(errs, field.Invalid(xp, "certFile/keyFile", "set both certFile and keyFile or neither"))
		}
	default:
		errs = append(errs, field.Required(ep, "local or external"))
	}
	ap := field.NewPath("apiServer")
	errs = append(errs, validateArgs(c.APIServer.ExtraArgs, ap.Child("extraArgs"))...)
	errs = append(errs, validateSANs(c.APIServer.CertSANs, ap.Child("certSANs"))...)
	errs = append(errs, validateArgs(c.ControllerManager.ExtraArgs, field.NewPath("controllerManager", "extraArgs"))...)
	errs = append(errs, validateArgs(c.Scheduler.ExtraArgs, field.NewPath("scheduler", "extraArgs"))...)
	switch c.CloudProvider {
	case "":
	case CloudProviderExternal:
		cp := field.NewPath("cloudControllerManager")
		errs = append(errs, validateArgs(c.CloudControllerManager.ExtraArgs, cp.Child("extraArgs"))...)
		if !strings.HasPrefix(c.CloudControllerManager.CloudConfig, "/") {
			errs = append(errs, field.Invalid(cp.Child("cloudConfig"), c.CloudControllerManager.CloudConfig, "must be an absolute path"))
		}
	default:
		errs = append(errs, field.NotSupported(field.NewPath("cloudProvider"), c.CloudProvider, []string{"", CloudProviderExternal}))
	}
	return errs
}

// ValidateJoinConfiguration checks a defaulted JoinConfiguration.
func ValidateJoinConfiguration(c *JoinConfiguration) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateTypeMeta(c.APIVersion, c.Kind, KindJoinConfiguration)...)
	errs = append(errs, validateNodeRegistration(&c.NodeRegistration, field.NewPath("nodeRegistration"))...)
	if !strings.HasPrefix(c.CACertPath, "/") {
		errs = append(errs, field.Invalid(field.NewPath("caCertPath"), c.CACertPath, "must be an absolute path"))
	}
	dp := field.NewPath("discovery")
	b := c.Discovery.BootstrapToken
	if b == nil {
		errs = append(errs, field.Required(dp.Child("bootstrapToken"), "bootstrap token discovery is the only kind supported"))
	} else {
		bp := dp.Child("bootstrapToken")
		if !tokenRE.MatchString(b.Token) {
			errs = append(errs, field.Invalid(bp.Child("token"), "<redacted>", `must match "[a-z0-9]{6}.[a-z0-9]{16}"`))
		}
		if err := validateHostPort(b.APIServerEndpoint, false); err != nil {
			errs = append(errs, field.Invalid(bp.Child("apiServerEndpoint"), b.APIServerEndpoint, err.Error()))
		}
		if len(b.CACertHashes) == 0 && !b.UnsafeSkipCAVerification {
			errs = append(errs, field.Required(bp.Child("caCertHashes"), "pin the CA with caCertHashes or set unsafeSkipCAVerification"))
		}
		for i, h := range b.CACertHashes {
			if !caHashRE.MatchString(h) {
				errs = append(errs, field.Invalid(bp.Child("caCertHashes").Index(i), h, `must be "sha256:" and 64 lower-case hex digits`))
			}
		}
	}
	if t := c.Discovery.TLSBootstrapToken; t != "" && !tokenRE.MatchString(t) {
		errs = append(errs, field.Invalid(dp.Child("tlsBootstrapToken"), "<redacted>", `must match "[a-z0-9]{6}.[a-z0-9]{16}"`))
	}
	if cp := c.ControlPlane; cp != nil {
		p := field.NewPath("controlPlane")
		if a := cp.LocalAPIEndpoint.AdvertiseAddress; a != "" && net.ParseIP(a) == nil {
			errs = append(errs, field.Invalid(p.Child("localAPIEndpoint", "advertiseAddress"), a, "must be an IP address"))
		}
		errs = append(errs, validatePort(cp.LocalAPIEndpoint.BindPort, p.Child("localAPIEndpoint", "bindPort"))...)
		if cp.CertificateKey == "" {
			errs = append(errs, field.Required(p.Child("certificateKey"), "the key init printed decrypts the shared certificates"))
		}
		errs = append(errs, validateCertificateKey(cp.CertificateKey, p.Child("certificateKey"))...)
	}
	if c.Discovery.Timeout != nil && c.Discovery.Timeout.Duration <= 0 {
		errs = append(errs, field.Invalid(dp.Child("timeout"), c.Discovery.Timeout.Duration.String(), "must be positive"))
	}
	return errs
}

// ValidateBootstrapToken checks one defaulted bootstrap token at path p. An empty
// token is valid: triremeadm generates one.
func ValidateBootstrapToken(t *BootstrapToken, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Token != "" && !tokenRE.MatchString(t.Token) {
		errs = append(errs, field.Invalid(p.Child("token"), "<redacted>", `must match "[a-z0-9]{6}.[a-z0-9]{16}"`))
	}
	if t.TTL != nil && t.TTL.Duration < 0 {
		errs = append(errs, field.Invalid(p.Child("ttl"), t.TTL.Duration.String(), "must not be negative"))
	}
	for i, u := range t.Usages {
		if u != "signing" && u != "authentication" {
			errs = append(errs, field.NotSupported(p.Child("usages").Index(i), u, []string{"signing", "authentication"}))
		}
	}
	for i, g := range t.Groups {
		if !strings.HasPrefix(g, "system:bootstrappers:") {
			errs = append(errs, field.Invalid(p.Child("groups").Index(i), g, `must start with "system:bootstrappers:"`))
		}
	}
	return errs
}

func validateTypeMeta(apiVersion, kind, want string) field.ErrorList {
	var errs field.ErrorList
	if apiVersion != APIVersion {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), apiVersion, []string{APIVersion}))
	}
	if kind != want {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), kind, []string{want}))
	}
	return errs
}

func validateNodeRegistration(n *NodeRegistrationOptions, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if n.Name != "" {
		for _, msg := range validation.IsDNS1123Subdomain(n.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), n.Name, msg))
		}
	}
	if u, err := url.Parse(n.CRISocket); err != nil || u.Scheme != "unix" || u.Path == "" {
		errs = append(errs, field.Invalid(p.Child("criSocket"), n.CRISocket, "must be a unix:// URL"))
	}
	for i, t := range n.Taints {
		tp := p.Child("taints").Index(i)
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(tp.Child("key"), t.Key, msg))
		}
		switch t.Effect {
		case "NoSchedule", "PreferNoSchedule", "NoExecute":
		default:
			errs = append(errs, field.NotSupported(tp.Child("effect"), t.Effect, []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}))
		}
	}
	errs = append(errs, validateArgs(n.KubeletExtraArgs, p.Child("kubeletExtraArgs"))...)
	return errs
}

func validateArgs(args []Arg, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, a := range args {
		if a.Name == "" || strings.HasPrefix(a.Name, "-") || strings.ContainsAny(a.Name, "= \t") {
			errs = append(errs, field.Invalid(p.Index(i).Child("name"), a.Name, "must be a flag name without leading dashes, spaces or '='"))
		}
	}
	return errs
}

func validateSANs(sans []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, s := range sans {
		if net.ParseIP(s) != nil {
			continue
		}
		name := strings.TrimPrefix(s, "*.")
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Index(i), s, "must be an IP address or a DNS name: "+strings.Join(msgs, "; ")))
		}
	}
	return errs
}

func validateCIDR(s string, p *field.Path) field.ErrorList {
	if _, _, err := net.ParseCIDR(s); err != nil {
		return field.ErrorList{field.Invalid(p, s, "must be a CIDR such as 10.96.0.0/12")}
	}
	return nil
}

func validatePort(port int32, p *field.Path) field.ErrorList {
	if port < 1 || port > 65535 {
		return field.ErrorList{field.Invalid(p, port, "must be between 1 and 65535")}
	}
	return nil
}

// validateHostPort accepts "host:port", and "host" alone when portOptional.
func validateHostPort(s string, portOptional bool) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		if !portOptional {
			return fmt.Errorf("must be host:port")
		}
		host, port = s, ""
	}
	if net.ParseIP(host) == nil {
		if msgs := validation.IsDNS1123Subdomain(host); len(msgs) > 0 {
			return fmt.Errorf("host must be an IP address or a DNS name")
		}
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port must be between 1 and 65535")
		}
	}
	return nil
}

// MinEtcdSnapshotInterval keeps a mistyped interval ("12" read as 12ns) from
// snapshotting in a loop.
const MinEtcdSnapshotInterval = time.Minute

func validateEtcdSnapshots(s *EtcdSnapshots, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Interval != nil && s.Interval.Duration != 0 && s.Interval.Duration < MinEtcdSnapshotInterval {
		errs = append(errs, field.Invalid(p.Child("interval"), s.Interval.Duration.String(), "must be 0 (no snapshots) or at least "+MinEtcdSnapshotInterval.String()))
	}
	if s.Retention != nil && *s.Retention < 1 {
		errs = append(errs, field.Invalid(p.Child("retention"), *s.Retention, "must be at least 1"))
	}
	if s.Dir != "" && !strings.HasPrefix(s.Dir, "/") {
		errs = append(errs, field.Invalid(p.Child("dir"), s.Dir, "must be an absolute path"))
	}
	return errs
}
