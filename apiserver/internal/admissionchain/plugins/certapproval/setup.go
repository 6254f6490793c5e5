// Package certapproval is the CertificateApproval admission plugin: only a
// user allowed to "approve" a CSR's signer (resource signers in
// certificates.k8s.io, named after the signer or its domain with "/*") may
// approve or deny it.
package certapproval

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "CertificateApproval"

// Register adds CertificateApproval to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return New(), nil
	})
}
