// Package options holds trireme-dashboard's flags and checks them.
package options

import (
	"github.com/spf13/pflag"

	"trireme.dev/componentbase/logging"
	"trireme.dev/componentbase/serving"
)

// SecurePort is where the console is served over HTTPS.
const SecurePort = 8443

// Options are the command line.
type Options struct {
	// Kubeconfig locates the apiserver (its address and CA only: the
	// credentials in it are never used); empty means in-cluster.
	Kubeconfig string
	// SessionKeyFile holds a 32-byte AES key sealing session cookies, so
	// that replicas and restarts share sessions; empty means a key made
	// at start.
	SessionKeyFile string
	*serving.Options
	logging.Settings
}

// New returns the defaults.
func New() *Options {
	o := &Options{Options: serving.NewOptions(SecurePort, "trireme-dashboard"), Settings: logging.Defaults("text")}
	// The console authenticates its users itself, by their own tokens.
	o.Authentication, o.Authorization = nil, nil
	return o
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Path to a kubeconfig naming the apiserver and its CA; its credentials are ignored. Empty means in-cluster configuration.")
	fs.StringVar(&o.SessionKeyFile, "session-key-file", o.SessionKeyFile, "File holding the 32-byte AES-256 key that seals session cookies; empty means a key made at start (sessions end with the process).")
	o.SecureServing.AddFlags(fs)
	o.Settings.AddFlags(fs)
}

// Validate reports every invalid option.
func (o *Options) Validate() []error {
	return append(o.SecureServing.Validate(), o.Settings.Validate()...)
}
