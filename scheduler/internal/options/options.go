// Package options holds trireme-scheduler's flags, with upstream's names,
// over its --config file (upstream's KubeSchedulerConfiguration), and
// checks them.
package options

import (
	"fmt"

	"github.com/spf13/pflag"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"trireme.dev/api/config/kubescheduler"
)

// SecurePort is the scheduler's well-known HTTPS port.
const SecurePort = 10259

// Options are the command line. Flags bound to Config fields override the
// --config file's values.
type Options struct {
	// ConfigFile is --config; empty means defaults and flags only.
	ConfigFile string
	// Config is the component configuration, defaulted.
	Config *configv1.KubeSchedulerConfiguration
	// SecureServing serves health and metrics; port 0 turns it off.
	SecureServing *apiserveroptions.SecureServingOptions
	// Authentication and Authorization guard the secure port, delegated
	// to the apiserver as upstream's are.
	Authentication *apiserveroptions.DelegatingAuthenticationOptions
	Authorization  *apiserveroptions.DelegatingAuthorizationOptions
	LogFormat      string
	Verbosity      int
}

// New returns options with every default, bound to cfg (the default
// configuration when nil).
func New(cfg *configv1.KubeSchedulerConfiguration) *Options {
	if cfg == nil {
		cfg = kubescheduler.Default()
	}
	ss := apiserveroptions.NewSecureServingOptions()
	ss.BindPort = SecurePort
	ss.ServerCert.CertDirectory = ""
	ss.ServerCert.PairName = "trireme-scheduler"
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

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	cc := &o.Config.ClientConnection
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "File holding a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1); flags given on the command line override its values.")
	fs.StringVar(&cc.Kubeconfig, "kubeconfig", cc.Kubeconfig, "Path to a kubeconfig file with the apiserver's address and credentials; empty means in-cluster configuration.")
	fs.Float32Var(&cc.QPS, "kube-api-qps", cc.QPS, "Queries per second to the apiserver.")
	fs.Int32Var(&cc.Burst, "kube-api-burst", cc.Burst, "Burst of queries to the apiserver.")
	fs.StringVar(&cc.ContentType, "kube-api-content-type", cc.ContentType, "Content type of requests sent to the apiserver.")

	le := &o.Config.LeaderElection
	fs.BoolVar(le.LeaderElect, "leader-elect", *le.LeaderElect, "Hold a leader election Lease before scheduling, so that only one replica of several schedules at a time.")
	fs.DurationVar(&le.LeaseDuration.Duration, "leader-elect-lease-duration", le.LeaseDuration.Duration, "How long other candidates wait after the last renewal before taking the Lease over.")
	fs.DurationVar(&le.RenewDeadline.Duration, "leader-elect-renew-deadline", le.RenewDeadline.Duration, "How long the leader keeps retrying a renewal before it gives up leading.")
	fs.DurationVar(&le.RetryPeriod.Duration, "leader-elect-retry-period", le.RetryPeriod.Duration, "How long candidates wait between attempts to acquire or renew the Lease.")
	fs.StringVar(&le.ResourceLock, "leader-elect-resource-lock", le.ResourceLock, "Kind of lock object; only 'leases' is supported.")
	fs.StringVar(&le.ResourceName, "leader-elect-resource-name", le.ResourceName, "Name of the leader election Lease.")
	fs.StringVar(&le.ResourceNamespace, "leader-elect-resource-namespace", le.ResourceNamespace, "Namespace of the leader election Lease.")

	fs.BoolVar(o.Config.EnableProfiling, "profiling", *o.Config.EnableProfiling, "Serve Go profiles at /debug/pprof/ on the secure port.")
	fs.BoolVar(o.Config.EnableContentionProfiling, "contention-profiling", *o.Config.EnableContentionProfiling, "Record lock contention for the profiles, when --profiling is on.")

	o.SecureServing.AddFlags(fs)
	o.Authentication.AddFlags(fs)
	o.Authorization.AddFlags(fs)
	fs.StringVar(&o.LogFormat, "log-format", o.LogFormat, "Log format: text or json.")
	fs.IntVarP(&o.Verbosity, "v", "v", o.Verbosity, "Log verbosity: 0 for what an operator needs, 2 for per-pod detail, 4 for debugging.")
}

// Validate reports every invalid option, naming the configuration field.
func (o *Options) Validate() []error {
	var errs []error
	errs = append(errs, o.SecureServing.Validate()...)
	errs = append(errs, o.Authentication.Validate()...)
	errs = append(errs, o.Authorization.Validate()...)
	for _, e := range kubescheduler.Validate(o.Config) {
		errs = append(errs, e)
	}
	if o.LogFormat != "text" && o.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("--log-format %q: want text or json", o.LogFormat))
	}
	if o.Verbosity < 0 {
		errs = append(errs, fmt.Errorf("-v must be 0 or more"))
	}
	return errs
}
