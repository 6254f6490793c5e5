package denyserviceexternalips

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
)

// Plugin refuses new external IPs.
type Plugin struct {
	*admission.Handler
}

var _ admission.ValidationInterface = (*Plugin)(nil)

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != corev1.Resource("services") || a.GetSubresource() != "" {
		return nil
	}
	svc, ok := a.GetObject().(*corev1.Service)
	if !ok || len(svc.Spec.ExternalIPs) == 0 {
		return nil
	}
	if old, ok := a.GetOldObject().(*corev1.Service); ok && sets.New(old.Spec.ExternalIPs...).IsSuperset(sets.New(svc.Spec.ExternalIPs...)) {
		return nil
	}
	return admission.NewForbidden(a, field.Forbidden(field.NewPath("spec", "externalIPs"), "use of external IPs is denied by admission control"))
}
