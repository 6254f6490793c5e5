// Package options holds trireme-netpol's flags and checks them.
package options

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"trireme.dev/componentbase/logging"
	"trireme.dev/componentbase/serving"
)

// SecurePort is where trireme-netpol serves /healthz and /metrics over
// HTTPS, next to the other node components' ports: not 10262, which the
// control-plane VIP manager holds on 127.0.0.1 (a wildcard bind there
// would fail on every control-plane node of an HA cluster), nor 10263, the
// LoadBalancer announcer's.
const SecurePort = 10264

// Options are the command line.
type Options struct {
	Kubeconfig string
	// HostnameOverride names the node whose pods are policed; empty means
	// $NODE_NAME, then the host name.
	HostnameOverride string
	MinSyncPeriod    time.Duration
	SyncPeriod       time.Duration
	// LogDeniedGroup, when not 0, logs denied packets through that NFLOG
	// group.
	LogDeniedGroup uint16
	// Cleanup removes the table and exits.
	Cleanup bool
	// Options serve health and metrics on the secure port, behind
	// delegated authentication and authorization.
	*serving.Options
	logging.Settings
}

// New returns the defaults.
func New() *Options {
	return &Options{
		MinSyncPeriod: 100 * time.Millisecond, SyncPeriod: time.Minute,
		Options: serving.NewOptions(SecurePort, "trireme-netpol"), Settings: logging.Defaults("text"),
	}
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig file; empty means in-cluster configuration.")
	fs.StringVar(&o.HostnameOverride, "hostname-override", o.HostnameOverride, "The node's name, whose pods are policed; empty means $NODE_NAME, then the host name.")
	fs.DurationVar(&o.MinSyncPeriod, "min-sync-period", o.MinSyncPeriod, "Least time between two writes of the table: changes within it are written together.")
	fs.DurationVar(&o.SyncPeriod, "sync-period", o.SyncPeriod, "Period of full rewrites of the table, repairing what else changed it.")
	fs.Uint16Var(&o.LogDeniedGroup, "log-denied-nflog-group", o.LogDeniedGroup, "Log denied packets (at most 10 a second per rule) through this NFLOG group, with the pod and policy that denied them; 0 logs none.")
	fs.BoolVar(&o.Cleanup, "cleanup", o.Cleanup, "Remove the nftables table and exit.")
	o.Options.AddFlags(fs)
	o.Settings.AddFlags(fs)
}

// Validate reports every invalid option.
func (o *Options) Validate() []error {
	errs := append(o.Options.Validate(), o.Settings.Validate()...)
	if o.MinSyncPeriod < 0 {
		errs = append(errs, fmt.Errorf("--min-sync-period must not be negative"))
	}
	if o.SyncPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--sync-period must be positive"))
	}
	return errs
}

// NodeName is the policed node's name.
func (o *Options) NodeName() (string, error) {
	name := o.HostnameOverride
	if name == "" {
		name = os.Getenv("NODE_NAME")
	}
	if name == "" {
		h, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("hostname: %w", err)
		}
		name = h
	}
	return strings.ToLower(strings.TrimSpace(name)), nil
}
