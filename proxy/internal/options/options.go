// Package options is trireme-proxy's command line: upstream kube-proxy's
// flags over a KubeProxyConfiguration read from --config (flags given on
// the command line win, as the kubelet's do).
package options

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"

	"trireme.dev/api/config/kubeproxy"
	"trireme.dev/componentbase/configfile"
	"trireme.dev/componentbase/logging"
)

// Options is the proxy's whole configuration.
type Options struct {
	Config     *kubeproxyv1alpha1.KubeProxyConfiguration
	ConfigFile string
	Kubeconfig string
	Master     string
	// Cleanup removes every rule of both modes and exits.
	Cleanup bool
	logging.Settings
	// MinSyncPeriod and SyncPeriod, when set, apply to the active mode.
	MinSyncPeriod, SyncPeriod pflag.Value

	masqueradeAll bool
}

// New returns options over cfg (the defaults when nil).
func New(cfg *kubeproxyv1alpha1.KubeProxyConfiguration) *Options {
	if cfg == nil {
		cfg = kubeproxy.Default()
	}
	return &Options{Config: cfg, Settings: logging.Defaults("text")}
}

// AddFlags binds the flags, with upstream kube-proxy's names, to o.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	c := o.Config
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "The path to a KubeProxyConfiguration file (kubeproxy.config.k8s.io/v1alpha1). Flags given on the command line override it.")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to kubeconfig file with authorization information.")
	fs.StringVar(&o.Master, "master", o.Master, "The address of the Kubernetes API server (overrides any value in kubeconfig).")
	fs.BoolVar(&o.Cleanup, "cleanup", o.Cleanup, "If true cleanup iptables and nftables rules and exit.")
	o.Settings.AddFlags(fs)
	fs.StringVar(&c.HostnameOverride, "hostname-override", c.HostnameOverride, "If non-empty, will be used as the name of the Node that kube-proxy is running on.")
	fs.Var((*modeValue)(&c.Mode), "proxy-mode", "Which proxy mode to use: 'iptables' or 'nftables'. Empty means iptables, as for kube-proxy.")
	fs.StringVar(&c.ClusterCIDR, "cluster-cidr", c.ClusterCIDR, "The CIDR range of the pods in the cluster; traffic to Services from outside it is masqueraded.")
	fs.StringSliceVar(&c.NodePortAddresses, "nodeport-addresses", c.NodePortAddresses, "A list of CIDR ranges that contain valid node IPs, or 'primary'. NodePort connections are accepted only on matching IPs. Empty: every local IP.")
	fs.BoolVar(&o.masqueradeAll, "masquerade-all", false, "SNAT all traffic sent via Service cluster IPs.")
	fs.StringVar(&c.HealthzBindAddress, "healthz-bind-address", c.HealthzBindAddress, "The IP address and port for the health check server to serve on. Empty disables it.")
	fs.StringVar(&c.MetricsBindAddress, "metrics-bind-address", c.MetricsBindAddress, "The IP address and port for the metrics server to serve on. Empty disables it.")
	fs.DurationVar(&c.ConfigSyncPeriod.Duration, "config-sync-period", c.ConfigSyncPeriod.Duration, "How often configuration from the apiserver is refreshed.")
	fs.Int32Var(c.IPTables.MasqueradeBit, "iptables-masquerade-bit", *c.IPTables.MasqueradeBit, "The bit of the fwmark space to mark packets requiring SNAT with.")
	fs.DurationVar(&c.IPTables.SyncPeriod.Duration, "iptables-sync-period", c.IPTables.SyncPeriod.Duration, "An interval how often rules are fully resynced in iptables mode.")
	fs.DurationVar(&c.IPTables.MinSyncPeriod.Duration, "iptables-min-sync-period", c.IPTables.MinSyncPeriod.Duration, "The minimum period between rule syncs in iptables mode.")
	o.SyncPeriod = &durationForMode{o: o, min: false}
	o.MinSyncPeriod = &durationForMode{o: o, min: true}
	fs.Var(o.SyncPeriod, "sync-period", "How often rules are fully resynced, in the mode in use.")
	fs.Var(o.MinSyncPeriod, "min-sync-period", "The minimum period between rule syncs (changes arriving meanwhile are batched), in the mode in use.")
}

// Validate checks the final options.
func (o *Options) Validate() []error {
	errs := o.Settings.Validate()
	for _, e := range kubeproxy.Validate(o.Config) {
		errs = append(errs, e)
	}
	return errs
}

// NodeName is --hostname-override or the host's name, lowercased as the
// kubelet registers it.
func (o *Options) NodeName() (string, error) {
	if o.Config.HostnameOverride != "" {
		return strings.ToLower(strings.TrimSpace(o.Config.HostnameOverride)), nil
	}
	h, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("hostname: %w", err)
	}
	return strings.ToLower(h), nil
}

// configKind reads --config: a KubeProxyConfiguration, strictly decoded
// and defaulted. Validate checks it once the flags are applied over it.
var configKind = configfile.Kind[*kubeproxyv1alpha1.KubeProxyConfiguration]{
	Scheme:  kubeproxy.Scheme,
	Default: kubeproxy.SetDefaults,
}

// LoadConfig reads the --config file at path.
func LoadConfig(path string) (*kubeproxyv1alpha1.KubeProxyConfiguration, error) {
	return configKind.Load(path)
}

type modeValue kubeproxyv1alpha1.ProxyMode

func (m *modeValue) String() string { return string(*m) }
func (m *modeValue) Set(s string) error {
	*m = modeValue(s)
	return nil
}
func (m *modeValue) Type() string { return "mode" }

// durationForMode remembers --sync-period or --min-sync-period until
// Apply, so that it does not matter where --proxy-mode stands.
type durationForMode struct {
	o   *Options
	min bool
	set string
}

func (d *durationForMode) String() string { return d.set }
func (d *durationForMode) Type() string   { return "duration" }
func (d *durationForMode) Set(s string) error {
	if _, err := parseDuration(s); err != nil {
		return err
	}
	d.set = s
	return nil
}

// Apply copies --sync-period, --min-sync-period and --masquerade-all, when
// given, into both modes' sections (only the active one is used).
func (o *Options) Apply() {
	if o.masqueradeAll {
		o.Config.IPTables.MasqueradeAll = true
		o.Config.NFTables.MasqueradeAll = true
	}
	for _, v := range []*durationForMode{o.SyncPeriod.(*durationForMode), o.MinSyncPeriod.(*durationForMode)} {
		if v.set == "" {
			continue
		}
		d, _ := parseDuration(v.set)
		if v.min {
			o.Config.IPTables.MinSyncPeriod.Duration = d
			o.Config.NFTables.MinSyncPeriod.Duration = d
		} else {
			o.Config.IPTables.SyncPeriod.Duration = d
			o.Config.NFTables.SyncPeriod.Duration = d
		}
	}
}

func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: %w", s, err)
	}
	return d, nil
}
