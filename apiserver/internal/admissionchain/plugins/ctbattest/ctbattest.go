package ctbattest

import (
	"context"
	"errors"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"trireme.dev/apiserver/internal/admissionchain/plugins/certsigning"
)

// Plugin checks the "attest" verb on a bundle's signer.
type Plugin struct {
	*admission.Handler
	authz authorizer.Authorizer
}

var (
	_ admission.ValidationInterface      = (*Plugin)(nil)
	_ genericinitializer.WantsAuthorizer = (*Plugin)(nil)
)

// New returns the ClusterTrustBundleAttest plugin.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}
}

// SetAuthorizer implements WantsAuthorizer.
func (p *Plugin) SetAuthorizer(a authorizer.Authorizer) { p.authz = a }

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.authz == nil {
		return errors.New(Name + " needs an authorizer")
	}
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != certificatesv1.Resource("clustertrustbundles") || a.GetSubresource() != "" {
		return nil
	}
	bundle, ok := a.GetObject().(*certificatesv1.ClusterTrustBundle)
	if !ok || bundle.Spec.SignerName == "" {
		return nil
	}
	// Checking the new object is safe: validation refuses a changed
	// signerName. An update that leaves the anchors alone (labels, storage
	// migration, finalizers) attests nothing new.
	if old, ok := a.GetOldObject().(*certificatesv1.ClusterTrustBundle); ok && a.GetOperation() == admission.Update &&
		old.Spec.TrustBundle == bundle.Spec.TrustBundle {
		return nil
	}
	if !certsigning.Allowed(ctx, p.authz, a.GetUserInfo(), "attest", bundle.Spec.SignerName) {
		return admission.NewForbidden(a, fmt.Errorf("user not permitted to attest for signerName %q", bundle.Spec.SignerName))
	}
	return nil
}
