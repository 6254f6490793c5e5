// Package options holds trireme-scheduler's flags, with upstream's names,
// over its --config file (upstream's KubeSchedulerConfiguration), and
// checks them.
package options

import (
	"github.com/spf13/pflag"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"trireme.dev/api/config/kubescheduler"
	"trireme.dev/componentbase/leaderelection"
	"trireme.dev/componentbase/logging"
	"trireme.dev/componentbase/serving"
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
	// Options serve health, metrics and profiles on the secure port
	// (port 0 turns it off), behind delegated authentication and
	// authorization.
	*serving.Options
	logging.Settings
}

// New returns options with every default, bound to cfg (the default
// configuration when nil).
func New(cfg *configv1.KubeSchedulerConfiguration) *Options {
	if cfg == nil {
		cfg = kubescheduler.Default()
	}
	return &Options{Config: cfg, Options: serving.NewOptions(SecurePort, "trireme-scheduler"), Settings: logging.Defaults("text")}
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	cc := &o.Config.ClientConnection
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "File holding a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1); flags given on the command line override its values.")
	fs.StringVar(&cc.Kubeconfig, "kubeconfig", cc.Kubeconfig, "Path to a kubeconfig file with the apiserver's address and credentials; empty means in-cluster configuration.")
	fs.Float32Var(&cc.QPS, "kube-api-qps", cc.QPS, "Queries per second to the apiserver.")
	fs.Int32Var(&cc.Burst, "kube-api-burst", cc.Burst, "Burst of queries to the apiserver.")
	fs.StringVar(&cc.ContentType, "kube-api-content-type", cc.ContentType, "Content type of requests sent to the apiserver.")

	leaderelection.AddFlags(fs, &o.Config.LeaderElection, "scheduling")

	fs.BoolVar(o.Config.EnableProfiling, "profiling", *o.Config.EnableProfiling, "Serve Go profiles at /debug/pprof/ on the secure port.")
	fs.BoolVar(o.Config.EnableContentionProfiling, "contention-profiling", *o.Config.EnableContentionProfiling, "Record lock contention for the profiles, when --profiling is on.")

	o.Options.AddFlags(fs)
	o.Settings.AddFlags(fs)
}

// Validate reports every invalid option, naming the configuration field.
func (o *Options) Validate() []error {
	errs := append(o.Options.Validate(), o.Settings.Validate()...)
	for _, e := range kubescheduler.Validate(o.Config) {
		errs = append(errs, e)
	}
	return errs
}
