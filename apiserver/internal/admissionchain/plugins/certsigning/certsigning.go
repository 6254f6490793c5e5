package certsigning

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// SignerCheck is an admission plugin that requires a verb on a CSR's
// signer for updates through one CSR subresource. CertificateSigning
// ("sign" on status) and CertificateApproval ("approve" on approval) are
// both this check.
type SignerCheck struct {
	*admission.Handler
	name, subresource, verb string
	// needed, when set, says whether an update needs the permission at all,
	// given the stored object; nil means every update does.
	needed func(csr, old *certificatesv1.CertificateSigningRequest) bool
	authz  authorizer.Authorizer
}

// NewSignerCheck returns the check named name for updates of subresource.
func NewSignerCheck(name, subresource, verb string, needed func(csr, old *certificatesv1.CertificateSigningRequest) bool) *SignerCheck {
	return &SignerCheck{Handler: admission.NewHandler(admission.Update), name: name, subresource: subresource, verb: verb, needed: needed}
}

// New returns the CertificateSigning plugin.
func New() *SignerCheck {
	// Only issuing (or changing) a certificate needs the signer's trust.
	return NewSignerCheck(Name, "status", "sign", func(csr, old *certificatesv1.CertificateSigningRequest) bool {
		return !bytes.Equal(csr.Status.Certificate, old.Status.Certificate)
	})
}

var (
	_ admission.ValidationInterface      = (*SignerCheck)(nil)
	_ genericinitializer.WantsAuthorizer = (*SignerCheck)(nil)
)

// SetAuthorizer implements WantsAuthorizer.
func (p *SignerCheck) SetAuthorizer(a authorizer.Authorizer) { p.authz = a }

// ValidateInitialization implements admission.InitializationValidator.
func (p *SignerCheck) ValidateInitialization() error {
	if p.authz == nil {
		return errors.New(p.name + " needs an authorizer")
	}
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *SignerCheck) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() == certificatesv1.Resource("podcertificaterequests") && a.GetSubresource() == "status" && p.verb == "sign" {
		return p.validatePodCertificate(ctx, a)
	}
	if a.GetResource().GroupResource() != certificatesv1.Resource("certificatesigningrequests") || a.GetSubresource() != p.subresource {
		return nil
	}
	csr, ok := a.GetObject().(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return nil
	}
	signer := csr.Spec.SignerName
	if p.needed != nil {
		old, ok := a.GetOldObject().(*certificatesv1.CertificateSigningRequest)
		if !ok || !p.needed(csr, old) {
			return nil
		}
		signer = old.Spec.SignerName
	}
	if !Allowed(ctx, p.authz, a.GetUserInfo(), p.verb, signer) {
		return admission.NewForbidden(a, fmt.Errorf("user not permitted to %s requests with signerName %q", p.verb, signer))
	}
	return nil
}

// validatePodCertificate requires "sign" on a PodCertificateRequest's
// signer for every answer to it, as upstream's registry does: issuing,
// denying and failing are all the signer's to say.
func (p *SignerCheck) validatePodCertificate(ctx context.Context, a admission.Attributes) error {
	old, ok := a.GetOldObject().(*certificatesv1.PodCertificateRequest)
	if !ok {
		return nil
	}
	if !Allowed(ctx, p.authz, a.GetUserInfo(), p.verb, old.Spec.SignerName) {
		return admission.NewForbidden(a, fmt.Errorf("user %q is not permitted to %q for signer %q", a.GetUserInfo().GetName(), p.verb, old.Spec.SignerName))
	}
	return nil
}

// Allowed reports whether u may perform verb on the signers resource named
// signerName, or on its whole domain ("example.com/*").
func Allowed(ctx context.Context, authz authorizer.Authorizer, u user.Info, verb, signerName string) bool {
	names := []string{signerName}
	if domain, _, ok := strings.Cut(signerName, "/"); ok {
		names = append(names, domain+"/*")
	}
	for _, name := range names {
		attrs := authorizer.AttributesRecord{
			User: u, Verb: verb, APIGroup: certificatesv1.GroupName, APIVersion: "*",
			Resource: "signers", Name: name, ResourceRequest: true,
		}
		if d, _, err := authz.Authorize(ctx, attrs); err == nil && d == authorizer.DecisionAllow {
			return true
		}
	}
	return false
}
