package namespaceautoprovision

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/apiserver/internal/admissionchain/namespacelookup"
)

// Plugin creates missing namespaces.
type Plugin struct {
	namespacelookup.Namespaces
}

var _ admission.MutationInterface = (*Plugin)(nil)

// Admit implements admission.MutationInterface.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	// A dry run must not leave a namespace behind.
	if a.GetNamespace() == "" || a.IsDryRun() || a.GetKind().GroupKind() == corev1.SchemeGroupVersion.WithKind("Namespace").GroupKind() {
		return nil
	}
	if !p.WaitForReady() {
		return admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	// Creating is the live check: a namespace the cache lags is AlreadyExists.
	if p.Cached(a.GetNamespace()) {
		return nil
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: a.GetNamespace()}}
	if _, err := p.Client().CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return admission.NewForbidden(a, err)
	}
	return nil
}
