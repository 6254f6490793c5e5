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

// Plugin checks the sign permission on certificate writes.
type Plugin struct {
	*admission.Handler
	authz authorizer.Authorizer
}

var (
	_ admission.ValidationInterface      = (*Plugin)(nil)
	_ genericinitializer.WantsAuthorizer = (*Plugin)(nil)
)

// SetAuthorizer implements WantsAuthorizer.
func (p *Plugin) SetAuthorizer(a authorizer.Authorizer) { p.authz = a }

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.authz == nil {
		return errors.New("CertificateSigning needs an authorizer")
	}
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != certificatesv1.Resource("certificatesigningrequests") || a.GetSubresource() != "status" {
		return nil
	}
	csr, ok := a.GetObject().(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return nil
	}
	old, ok := a.GetOldObject().(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return nil
	}
	// Only issuing (or changing) a certificate needs the signer's trust.
	if bytes.Equal(csr.Status.Certificate, old.Status.Certificate) {
		return nil
	}
	if !Allowed(ctx, p.authz, a.GetUserInfo(), "sign", old.Spec.SignerName) {
		return admission.NewForbidden(a, fmt.Errorf("user not permitted to sign requests with signerName %q", old.Spec.SignerName))
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
