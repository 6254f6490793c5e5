// Package server assembles trireme-apiserver from its options: storage,
// authentication, authorization, admission, OpenAPI, every served group and
// the post-start hooks that bootstrap the cluster's built-in objects.
package server

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/storage/storagebackend"

	"trireme.dev/apiserver/internal/admissionchain"
	"trireme.dev/apiserver/internal/authn"
	"trireme.dev/apiserver/internal/authz"
	"trireme.dev/apiserver/internal/registry/proxy"
	"trireme.dev/componentbase/logging"
)

// Options are trireme-apiserver's flags.
type Options struct {
	// DataDir holds the embedded etcd and the dev-mode certificates.
	DataDir        string
	SecureServing  *options.SecureServingOptionsWithLoopback
	Etcd           *options.EtcdOptions
	Audit          *options.AuditOptions
	Features       *options.FeatureOptions
	Authentication *authn.Options
	Authorization  *authz.Options
	Admission      *admissionchain.Options
	// ServerRun holds upstream's generic serving flags: --advertise-address,
	// in-flight limits, request timeouts, graceful shutdown.
	ServerRun             *options.ServerRunOptions
	ServiceClusterIPRange string
	ServiceNodePortRange  string
	logging.Settings
	// Kubelet is how the proxy subresources reach kubelets.
	Kubelet proxy.KubeletConfig
	// ProxyClientCertFile and ProxyClientKeyFile are the front-proxy client
	// certificate the aggregator presents to extension apiservers.
	ProxyClientCertFile string
	ProxyClientKeyFile  string
	// EnableAggregatorRouting sends aggregated requests to a Service's
	// endpoints rather than its ClusterIP.
	EnableAggregatorRouting bool
	// GCPercentAfterStartup, when positive, is the garbage collector's
	// target once start-up is over while the live heap is small (package
	// gcgoal lowers it for large ones); the command sets a lower one for
	// start-up. Not a flag: GOGC overrides both.
	GCPercentAfterStartup int
}

// newServerRunOptions returns upstream's serving defaults but one: a
// terminating server answers new requests with 429 and Retry-After until
// the requests in flight are done, then closes its connections within 2 s.
// Upstream's default waits up to --request-timeout (60 s) for connections
// carrying watches, which every kubelet and controller holds open, so a
// restart of a static-pod apiserver would stall for a minute.
func newServerRunOptions() *options.ServerRunOptions {
	o := options.NewServerRunOptions()
	o.ShutdownSendRetryAfter = true
	return o
}

// NewOptions returns the defaults: port 6443, the upstream service ranges,
// and a dev-mode data dir.
func NewOptions() *Options {
	o := &Options{
		DataDir:               "/var/lib/trireme/apiserver",
		SecureServing:         options.NewSecureServingOptions().WithLoopback(),
		Etcd:                  options.NewEtcdOptions(storagebackend.NewDefaultConfig("/registry", nil)),
		Audit:                 options.NewAuditOptions(),
		Features:              options.NewFeatureOptions(),
		Authentication:        authn.NewOptions(),
		Authorization:         authz.NewOptions(),
		Admission:             admissionchain.NewOptions(),
		ServerRun:             newServerRunOptions(),
		ServiceClusterIPRange: "10.96.0.0/12",
		ServiceNodePortRange:  "30000-32767",
		Settings:              logging.Defaults("text"),
		Kubelet:               proxy.NewKubeletConfig(),
		// Unlike upstream's default, route to endpoints: nothing guarantees
		// a service proxy on the control plane's hosts.
		EnableAggregatorRouting: true,
	}
	o.SecureServing.BindPort = 6443
	o.Etcd.DefaultStorageMediaType = "application/vnd.kubernetes.protobuf"
	return o
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir, "Directory for the embedded etcd (used when --etcd-servers is empty) and the generated certificates and admin.kubeconfig (used when no serving certificate is given).")
	o.SecureServing.AddFlags(fs)
	o.Etcd.AddFlags(fs)
	o.Audit.AddFlags(fs)
	o.Features.AddFlags(fs)
	o.Authentication.AddFlags(fs)
	o.Authorization.AddFlags(fs)
	o.Admission.AddFlags(fs)
	o.ServerRun.AddUniversalFlags(fs)
	fs.StringVar(&o.ServiceClusterIPRange, "service-cluster-ip-range", o.ServiceClusterIPRange, "CIDR range from which Service ClusterIPs are allocated; two comma-separated CIDRs, one per IP family, make the cluster dual-stack (the first is the primary family).")
	fs.StringVar(&o.ServiceNodePortRange, "service-node-port-range", o.ServiceNodePortRange, "Port range reserved for Services with NodePort visibility, as BEGIN-END.")
	o.Settings.AddFlags(fs)
	fs.StringVar(&o.Kubelet.CertFile, "kubelet-client-certificate", o.Kubelet.CertFile, "Client certificate file presented to kubelets (nodes/proxy).")
	fs.StringVar(&o.Kubelet.KeyFile, "kubelet-client-key", o.Kubelet.KeyFile, "Private key file of --kubelet-client-certificate.")
	fs.StringVar(&o.Kubelet.CAFile, "kubelet-certificate-authority", o.Kubelet.CAFile, "CA bundle that kubelets' serving certificates are verified against; without it they are not verified.")
	fs.StringVar(&o.ProxyClientCertFile, "proxy-client-cert-file", o.ProxyClientCertFile, "Client certificate the aggregator presents to extension apiservers (its CA is --requestheader-client-ca-file). Generated in dev mode.")
	fs.StringVar(&o.ProxyClientKeyFile, "proxy-client-key-file", o.ProxyClientKeyFile, "Private key of --proxy-client-cert-file.")
	fs.BoolVar(&o.EnableAggregatorRouting, "enable-aggregator-routing", o.EnableAggregatorRouting, "Proxy requests for aggregated APIs to an endpoint of the APIService's Service rather than to its ClusterIP.")
	fs.StringSliceVar(&o.Kubelet.PreferredAddressTypes, "kubelet-preferred-address-types", o.Kubelet.PreferredAddressTypes, "Order of node address types to use when connecting to kubelets.")
}

// serviceRanges parses the service ranges: the ClusterIP CIDRs, primary
// first, and the NodePort range.
func (o *Options) serviceRanges() ([]netip.Prefix, utilnet.PortRange, error) {
	cidrs, err := parseServiceCIDRs(o.ServiceClusterIPRange)
	if err != nil {
		return nil, utilnet.PortRange{}, err
	}
	pr, err := utilnet.ParsePortRange(o.ServiceNodePortRange)
	if err != nil {
		return nil, utilnet.PortRange{}, fmt.Errorf("--service-node-port-range: %w", err)
	}
	return cidrs, *pr, nil
}

// parseServiceCIDRs parses --service-cluster-ip-range: one CIDR, or two
// separated by a comma (dual-stack), one per IP family, as upstream.
func parseServiceCIDRs(v string) ([]netip.Prefix, error) {
	parts := strings.Split(v, ",")
	if strings.TrimSpace(v) == "" {
		return nil, errors.New("--service-cluster-ip-range: must hold at least one CIDR")
	}
	if len(parts) > 2 {
		return nil, fmt.Errorf("--service-cluster-ip-range: %q holds %d CIDRs; at most two, one per IP family, are supported", v, len(parts))
	}
	var out []netip.Prefix
	for i, p := range parts {
		cidr, err := netip.ParsePrefix(strings.TrimSpace(p))
		if err != nil {
			return nil, fmt.Errorf("--service-cluster-ip-range[%d]: %w", i, err)
		}
		out = append(out, cidr.Masked())
	}
	if len(out) == 2 && out[0].Addr().Is4() == out[1].Addr().Is4() {
		return nil, fmt.Errorf("--service-cluster-ip-range: %s and %s are of the same IP family; a dual-stack range needs one CIDR of each", out[0], out[1])
	}
	return out, nil
}

// Validate reports every invalid option.
func (o *Options) Validate() []error {
	var errs []error
	errs = append(errs, o.SecureServing.Validate()...)
	errs = append(errs, o.Audit.Validate()...)
	errs = append(errs, o.Features.Validate()...)
	errs = append(errs, o.Kubelet.Validate()...)
	errs = append(errs, o.Authorization.Validate()...)
	errs = append(errs, o.Authentication.Validate()...)
	errs = append(errs, o.ServerRun.Validate()...)
	if _, _, err := o.serviceRanges(); err != nil {
		errs = append(errs, err)
	}
	if (o.ProxyClientCertFile == "") != (o.ProxyClientKeyFile == "") {
		errs = append(errs, fmt.Errorf("--proxy-client-cert-file and --proxy-client-key-file go together"))
	}
	if o.DataDir == "" && len(o.Etcd.StorageConfig.Transport.ServerList) == 0 {
		errs = append(errs, fmt.Errorf("either --etcd-servers or --data-dir is required"))
	}
	return errs
}

func (o *Options) etcdDir() string { return filepath.Join(o.DataDir, "etcd") }
