// Package options holds trireme-controller-manager's flags and its
// --config file (upstream's KubeControllerManagerConfiguration), and checks
// them.
package options

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"
	kcmconfig "k8s.io/kube-controller-manager/config/v1alpha1"
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
	// SecureServing serves /healthz and /metrics; port 0 turns it off.
	SecureServing *apiserveroptions.SecureServingOptions
	// Authentication and Authorization guard the secure port, delegated
	// to the apiserver (TokenReview, SubjectAccessReview) as upstream's.
	Authentication *apiserveroptions.DelegatingAuthenticationOptions
	Authorization  *apiserveroptions.DelegatingAuthorizationOptions
	LogFormat      string
	Verbosity      int
}

// New returns options with every default, bound to cfg (DefaultConfig()
// when nil).
func New(cfg *kcmconfig.KubeControllerManagerConfiguration) *Options {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	ss := apiserveroptions.NewSecureServingOptions()
	ss.BindPort = SecurePort
	// Self-signed certificates stay in memory unless --cert-dir is given.
	ss.ServerCert.CertDirectory = ""
	ss.ServerCert.PairName = "trireme-controller-manager"
	// As upstream: without a kubeconfig for them (and outside a cluster)
	// nobody authenticates and only the health paths are allowed.
	authn := apiserveroptions.NewDelegatingAuthenticationOptions()
	authn.TolerateInClusterLookupFailure = true
	authn.RemoteKubeConfigFileOptional = true
	authz := apiserveroptions.NewDelegatingAuthorizationOptions()
	authz.RemoteKubeConfigFileOptional = true
	authz.AlwaysAllowPaths = []string{"/healthz", "/readyz", "/livez"}
	return &Options{Config: cfg, SecureServing: ss, Authentication: authn, Authorization: authz, LogFormat: "text"}
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

	le := &g.LeaderElection
	fs.BoolVar(le.LeaderElect, "leader-elect", *le.LeaderElect, "Hold a leader election Lease before running controllers, so that only one replica of several works at a time.")
	fs.DurationVar(&le.LeaseDuration.Duration, "leader-elect-lease-duration", le.LeaseDuration.Duration, "How long other candidates wait after the last renewal before taking the Lease over.")
	fs.DurationVar(&le.RenewDeadline.Duration, "leader-elect-renew-deadline", le.RenewDeadline.Duration, "How long the leader keeps retrying a renewal before it gives up leading.")
	fs.DurationVar(&le.RetryPeriod.Duration, "leader-elect-retry-period", le.RetryPeriod.Duration, "How long candidates wait between attempts to acquire or renew the Lease.")
	fs.StringVar(&le.ResourceLock, "leader-elect-resource-lock", le.ResourceLock, "Kind of lock object; only 'leases' is supported.")
	fs.StringVar(&le.ResourceName, "leader-elect-resource-name", le.ResourceName, "Name of the leader election Lease.")
	fs.StringVar(&le.ResourceNamespace, "leader-elect-resource-namespace", le.ResourceNamespace, "Namespace of the leader election Lease.")

	fs.StringVar(&o.Config.SAController.RootCAFile, "root-ca-file", o.Config.SAController.RootCAFile, "PEM bundle published to every namespace as ConfigMap kube-root-ca.crt; empty means the kubeconfig's certificate authority.")
	fs.BoolVar(&o.Config.KubeCloudShared.UseServiceAccountCredentials, "use-service-account-credentials", o.Config.KubeCloudShared.UseServiceAccountCredentials, "Give each controller its own ServiceAccount in kube-system and tokens from the TokenRequest API, instead of this process's credentials.")
	rq := &o.Config.ResourceQuotaController
	fs.DurationVar(&rq.ResourceQuotaSyncPeriod.Duration, "resource-quota-sync-period", rq.ResourceQuotaSyncPeriod.Duration, "How often every ResourceQuota's usage is recalculated in full.")
	fs.Int32Var(&rq.ConcurrentResourceQuotaSyncs, "concurrent-resource-quota-syncs", rq.ConcurrentResourceQuotaSyncs, "ResourceQuotas synced at once.")

	addServiceAndClusterFlags(fs, o.Config)
	addWorkloadFlags(fs, o.Config)
	o.addNodeFlags(fs)

	o.SecureServing.AddFlags(fs)
	o.Authentication.AddFlags(fs)
	o.Authorization.AddFlags(fs)
	fs.StringVar(&o.LogFormat, "log-format", o.LogFormat, "Log format: text or json.")
	fs.IntVarP(&o.Verbosity, "v", "v", o.Verbosity, "Log verbosity: 0 for what an operator needs, 2 for per-object detail, 4 for debugging.")
}

// Validate reports every invalid option. known are the controller names
// (and aliases) --controllers may use.
func (o *Options) Validate(known []string) []error {
	var errs []error
	errs = append(errs, o.SecureServing.Validate()...)
	errs = append(errs, o.Authentication.Validate()...)
	errs = append(errs, o.Authorization.Validate()...)
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
	le := g.LeaderElection
	if *le.LeaderElect {
		if le.ResourceLock != "leases" {
			errs = append(errs, fmt.Errorf("--leader-elect-resource-lock %q: only leases is supported", le.ResourceLock))
		}
		if le.ResourceName == "" || le.ResourceNamespace == "" {
			errs = append(errs, fmt.Errorf("--leader-elect-resource-name and --leader-elect-resource-namespace must not be empty"))
		}
		// client-go refuses these at start; saying so here names the flags.
		if le.LeaseDuration.Duration <= le.RenewDeadline.Duration {
			errs = append(errs, fmt.Errorf("--leader-elect-lease-duration (%v) must be greater than --leader-elect-renew-deadline (%v)", le.LeaseDuration.Duration, le.RenewDeadline.Duration))
		}
		if le.RetryPeriod.Duration <= 0 || float64(le.RenewDeadline.Duration) <= 1.2*float64(le.RetryPeriod.Duration) {
			errs = append(errs, fmt.Errorf("--leader-elect-renew-deadline (%v) must be greater than 1.2 x --leader-elect-retry-period (%v)", le.RenewDeadline.Duration, le.RetryPeriod.Duration))
		}
	}
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
	if o.LogFormat != "text" && o.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("--log-format %q: want text or json", o.LogFormat))
	}
	if o.Verbosity < 0 {
		errs = append(errs, fmt.Errorf("-v must be 0 or more"))
	}
	return errs
}
