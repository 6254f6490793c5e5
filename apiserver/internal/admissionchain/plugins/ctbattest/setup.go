// Package ctbattest is the ClusterTrustBundleAttest admission plugin: only
// a user allowed to "attest" for a signer may publish or change a
// ClusterTrustBundle naming that signer, so workloads trusting a signer's
// bundles trust only what the signer's operators put there.
package ctbattest

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "ClusterTrustBundleAttest"

// Register adds ClusterTrustBundleAttest to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return New(), nil
	})
}
