package pvcresize

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	storagelisters "k8s.io/client-go/listers/storage/v1"
)

// Plugin checks claim expansions.
type Plugin struct {
	*admission.Handler
	lister storagelisters.StorageClassLister
}

var (
	_ admission.ValidationInterface                       = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
)

// SetExternalKubeInformerFactory implements WantsExternalKubeInformerFactory.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	inf := f.Storage().V1().StorageClasses()
	p.lister = inf.Lister()
	p.SetReadyFunc(inf.Informer().HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.lister == nil {
		return errors.New("PersistentVolumeClaimResize needs an informer factory")
	}
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != corev1.Resource("persistentvolumeclaims") || a.GetSubresource() != "" {
		return nil
	}
	pvc, ok := a.GetObject().(*corev1.PersistentVolumeClaim)
	old, ok2 := a.GetOldObject().(*corev1.PersistentVolumeClaim)
	if !ok || !ok2 {
		return nil
	}
	size, oldSize := pvc.Spec.Resources.Requests[corev1.ResourceStorage], old.Spec.Resources.Requests[corev1.ResourceStorage]
	if size.Cmp(oldSize) <= 0 {
		return nil
	}
	if old.Status.Phase != corev1.ClaimBound {
		//lint:ignore ST1005 upstream's message, word for word: clients match on it.
		return admission.NewForbidden(a, errors.New("Only bound persistent volume claims can be expanded"))
	}
	if !p.WaitForReady() {
		return admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	if !p.allowsExpansion(pvc) {
		return admission.NewForbidden(a, errors.New("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"))
	}
	return nil
}

func (p *Plugin) allowsExpansion(pvc *corev1.PersistentVolumeClaim) bool {
	name := ""
	if pvc.Spec.StorageClassName != nil {
		name = *pvc.Spec.StorageClassName
	}
	if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		name = c
	}
	if name == "" {
		return false
	}
	sc, err := p.lister.Get(name)
	return err == nil && sc.AllowVolumeExpansion != nil && *sc.AllowVolumeExpansion
}
