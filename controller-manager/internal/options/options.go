// Package options holds trireme-controller-manager's flags and its
// --config file (upstream's KubeControllerManagerConfiguration), and checks
// them.
package options

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	kcmconfig "k8s.io/kube-controller-manager/config/v1alpha1"

	"trireme.dev/componentbase/leaderelection"
	"trireme.dev/componentbase/logging"
	"trireme.dev/componentbase/serving"
)

// SecurePort is the controller-manager's well-known HTTPS port.
const SecurePort = 10257

// Options are the command line. Flags bound to Config fields override the
// --config file's values.
type Options struct {
	// ConfigFile is --config; empty means defaults and flags only.
	ConfigFile string
	// Config is the component configuration, defaulted.
	Config *kcmconfig.KubeControllerManagerConfiguration
	// Options serve health, metrics and profiles on the secure port
	// (port 0 turns it off), behind delegated authentication and
	// authorization.
	*serving.Options
	logging.Settings
	// CertificateExpiry configures the warnings of this node's certificates
	// expiring (package certexpiry); off without a directory.
	CertificateExpiry CertificateExpiry
}

// CertificateExpiry are the flags of the certificate expiry warnings.
type CertificateExpiry struct {
	// Dir is the node's certificates directory; empty turns the check off.
	Dir string
	// Node is the Node the Events are about.
	Node string
	// WarnDays is how many days before expiry the warnings start.
	WarnDays int
}

// New returns options with every default, bound to cfg (DefaultConfig()
// when nil).
func New(cfg *kcmconfig.KubeControllerManagerConfiguration) *Options {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	return &Options{Config: cfg, Options: serving.NewOptions(SecurePort, "trireme-controller-manager"), Settings: logging.Defaults("text"),
		CertificateExpiry: CertificateExpiry{WarnDays: 30}}
}

// AddFlags registers the options on fs, with upstream's flag names.
func (o *Options) AddFlags(fs *pflag.FlagSet, known []string) {
	g := &o.Config.Generic
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "File holding a KubeControllerManagerConfiguration (kubecontrollermanager.config.k8s.io/v1alpha1); flags given on the command line override its values.")
	fs.StringVar(&g.ClientConnection.Kubeconfig, "kubeconfig", g.ClientConnection.Kubeconfig, "Path to a kubeconfig file with the apiserver's address and the credentials to use; empty means in-cluster configuration.")
	fs.Float32Var(&g.ClientConnection.QPS, "kube-api-qps", g.ClientConnection.QPS, "Queries per second to the apiserver, per client.")
	fs.Int32Var(&g.ClientConnection.Burst, "kube-api-burst", g.ClientConnection.Burst, "Burst of queries to the apiserver, per client.")
	fs.StringVar(&g.ClientConnection.ContentType, "kube-api-content-type", g.ClientConnection.ContentType, "Content type of requests sent to the apiserver.")
	fs.DurationVar(&g.MinResyncPeriod.Duration, "min-resync-period", g.MinResyncPeriod.Duration, "Informers resync at a random period between this and twice this.")
	fs.BoolVar(g.Debugging.EnableProfiling, "profiling", *g.Debugging.EnableProfiling, "Serve Go profiles at /debug/pprof on the secure port, to identities the apiserver authorizes.")
	fs.StringSliceVar(&g.Controllers, "controllers", g.Controllers, fmt.Sprintf("Controllers to run: '*' runs every controller on by default, 'foo' adds foo, '-foo' removes foo; the first entry naming a controller wins. Known: %s.", strings.Join(known, ", ")))

	leaderelection.AddFlags(fs, &g.LeaderElection, "running controllers")

	fs.StringVar(&o.Config.SAController.RootCAFile, "root-ca-file", o.Config.SAController.RootCAFile, "PEM bundle published to every namespace as ConfigMap kube-root-ca.crt; empty means the kubeconfig's certificate authority.")
	fs.BoolVar(&o.Config.KubeCloudShared.UseServiceAccountCredentials, "use-service-account-credentials", o.Config.KubeCloudShared.UseServiceAccountCredentials, "Give each controller its own ServiceAccount in kube-system and tokens from the TokenRequest API, instead of this process's credentials.")
	rq := &o.Config.ResourceQuotaController
	fs.DurationVar(&rq.ResourceQuotaSyncPeriod.Duration, "resource-quota-sync-period", rq.ResourceQuotaSyncPeriod.Duration, "How often every ResourceQuota's usage is recalculated in full.")
	fs.Int32Var(&rq.ConcurrentResourceQuotaSyncs, "concurrent-resource-quota-syncs", rq.ConcurrentResourceQuotaSyncs, "ResourceQuotas synced at once.")

	addServiceAndClusterFlags(fs, o.Config)
	addWorkloadFlags(fs, o.Config)
	o.addNodeFlags(fs)

	o.Options.AddFlags(fs)
	o.Settings.AddFlags(fs)
	ce := &o.CertificateExpiry
	fs.StringVar(&ce.Dir, "certificate-expiry-dir", ce.Dir, "This node's certificates directory: every replica (leader or not) exports when each *.crt below it expires and records a Warning Event on --node-name for one that expires within --certificate-expiry-warning-days. Empty turns it off.")
	fs.StringVar(&ce.Node, "node-name", ce.Node, "The Node this replica runs on, for the certificate expiry Events.")
	fs.IntVar(&ce.WarnDays, "certificate-expiry-warning-days", ce.WarnDays, "How many days before a certificate expires the Warning Events start.")
}

// Validate reports every invalid option. known are the controller names
// (and aliases) --controllers may use.
func (o *Options) Validate(known []string) []error {
	errs := append(o.Options.Validate(), o.Settings.Validate()...)
	g := o.Config.Generic
	for _, c := range g.Controllers {
		name := strings.TrimPrefix(c, "-")
		if c != "*" && !slices.Contains(known, name) {
			errs = append(errs, fmt.Errorf("--controllers: unknown controller %q", c))
		}
	}
	if g.MinResyncPeriod.Duration <= 0 {
		errs = append(errs, fmt.Errorf("--min-resync-period must be positive"))
	}
	errs = append(errs, leaderelection.Validate(g.LeaderElection)...)
	rq := o.Config.ResourceQuotaController
	if rq.ResourceQuotaSyncPeriod.Duration <= 0 {
		errs = append(errs, fmt.Errorf("--resource-quota-sync-period must be positive"))
	}
	if rq.ConcurrentResourceQuotaSyncs <= 0 {
		errs = append(errs, fmt.Errorf("--concurrent-resource-quota-syncs must be positive"))
	}
	errs = append(errs, validateServiceAndCluster(o.Config)...)
	errs = append(errs, validateWorkloads(o.Config)...)
	errs = append(errs, o.validateNodes()...)
	if ce := o.CertificateExpiry; ce.Dir != "" && (ce.Node == "" || ce.WarnDays < 1) {
		errs = append(errs, fmt.Errorf("--certificate-expiry-dir needs --node-name and a positive --certificate-expiry-warning-days"))
	}
	return errs
}
