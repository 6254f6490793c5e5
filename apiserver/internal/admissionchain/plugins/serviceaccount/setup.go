// Package serviceaccount is the ServiceAccount admission plugin: every new
// pod runs as a service account ("default" unless it names one) that must
// already exist, and gets that account's token, the cluster CA and its
// namespace mounted at /var/run/secrets/kubernetes.io/serviceaccount unless
// it or the account opts out.
package serviceaccount

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "ServiceAccount"

// Register adds ServiceAccount to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) { return newPlugin(), nil })
}
