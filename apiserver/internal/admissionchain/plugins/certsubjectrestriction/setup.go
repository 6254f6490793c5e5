// Package certsubjectrestriction is the CertificateSubjectRestriction
// admission plugin: nobody obtains a system:masters client certificate
// through a CertificateSigningRequest, since that group bypasses all
// authorization and cannot be revoked.
package certsubjectrestriction

import (
	"io"

	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "CertificateSubjectRestriction"

// Register adds CertificateSubjectRestriction to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Handler: admission.NewHandler(admission.Create)}, nil
	})
}
