package storageobjectinuseprotection

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/admission"
)

// Finalizers removed by the pvc-protection and pv-protection controllers.
const (
	PVCFinalizer = "kubernetes.io/pvc-protection"
	PVFinalizer  = "kubernetes.io/pv-protection"
)

// Plugin adds the protection finalizers.
type Plugin struct {
	*admission.Handler
}

var _ admission.MutationInterface = (*Plugin)(nil)

// Admit implements admission.MutationInterface.
func (p *Plugin) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetSubresource() != "" {
		return nil
	}
	switch obj := a.GetObject().(type) {
	case *corev1.PersistentVolumeClaim:
		if !slices.Contains(obj.Finalizers, PVCFinalizer) {
			obj.Finalizers = append(obj.Finalizers, PVCFinalizer)
		}
	case *corev1.PersistentVolume:
		if !slices.Contains(obj.Finalizers, PVFinalizer) {
			obj.Finalizers = append(obj.Finalizers, PVFinalizer)
		}
	}
	return nil
}
