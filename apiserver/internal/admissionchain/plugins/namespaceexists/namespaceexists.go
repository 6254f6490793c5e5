package namespaceexists

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/apiserver/internal/admissionchain/namespacelookup"
)

// Plugin refuses requests in missing namespaces.
type Plugin struct {
	namespacelookup.Namespaces
}

var _ admission.ValidationInterface = (*Plugin)(nil)

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetNamespace() == "" || a.GetKind().GroupKind() == corev1.SchemeGroupVersion.WithKind("Namespace").GroupKind() {
		return nil
	}
	if !p.WaitForReady() {
		return admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	ok, err := p.Exists(ctx, a.GetNamespace())
	switch {
	case err != nil:
		return apierrors.NewInternalError(err)
	case !ok:
		return apierrors.NewNotFound(corev1.Resource("namespaces"), a.GetNamespace())
	}
	return nil
}
