package certsubjectrestriction

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/api/validation"
)

// mastersGroup is the group the apiserver trusts without authorization.
const mastersGroup = "system:masters"

// Plugin refuses CSRs for system:masters client certificates.
type Plugin struct {
	*admission.Handler
}

var _ admission.ValidationInterface = (*Plugin)(nil)

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != certificatesv1.Resource("certificatesigningrequests") || a.GetSubresource() != "" {
		return nil
	}
	csr, ok := a.GetObject().(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return nil
	}
	// Only the apiserver client signer's certificates are trusted for
	// authentication by the apiserver.
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return nil
	}
	req, err := validation.ParseCSR(csr.Spec.Request)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("failed to parse CSR: %w", err))
	}
	for _, org := range req.Subject.Organization {
		if org == mastersGroup {
			return admission.NewForbidden(a, fmt.Errorf("use of %s signer with %s group is not allowed", csr.Spec.SignerName, mastersGroup))
		}
	}
	return nil
}
