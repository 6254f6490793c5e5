// Package denyserviceexternalips is the DenyServiceExternalIPs admission
// plugin: no new Service external IPs, which would let a tenant capture
// traffic to any address (CVE-2020-8554). Existing ones may stay or go.
package denyserviceexternalips

import (
	"context"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
)

// Name is the plugin's name in --enable-admission-plugins.
const Name = "DenyServiceExternalIPs"

// Register adds DenyServiceExternalIPs to plugins.
func Register(plugins *admission.Plugins) {
	plugins.Register(Name, func(io.Reader) (admission.Interface, error) {
		return &Plugin{Handler: admission.NewHandler(admission.Create, admission.Update)}, nil
	})
}

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
