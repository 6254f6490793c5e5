// Package certsigning is the CertificateSigning admission plugin: only a
// user allowed to "sign" for a CSR's signer may set or change the issued
// certificate in its status.
package certsigning

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "CertificateSigning"

// Register adds CertificateSigning to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return New(), nil
	})
}
