package defaultstorageclass

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	storagelisters "k8s.io/client-go/listers/storage/v1"
)

// Annotations marking the default class; the beta spelling still counts.
const (
	isDefaultAnnotation     = "storageclass.kubernetes.io/is-default-class"
	betaIsDefaultAnnotation = "storageclass.beta.kubernetes.io/is-default-class"
)

// Plugin defaults claims' storage class.
type Plugin struct {
	*admission.Handler
	lister storagelisters.StorageClassLister
}

var (
	_ admission.MutationInterface                         = (*Plugin)(nil)
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
		return errors.New("DefaultStorageClass needs an informer factory")
	}
	return nil
}

// Admit implements admission.MutationInterface.
func (p *Plugin) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != corev1.Resource("persistentvolumeclaims") || a.GetSubresource() != "" {
		return nil
	}
	pvc, ok := a.GetObject().(*corev1.PersistentVolumeClaim)
	if !ok || pvc.Spec.StorageClassName != nil {
		return nil
	}
	if _, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		return nil
	}
	if !p.WaitForReady() {
		return admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	def, err := Default(p.lister)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("failed to get default storage class: %w", err))
	}
	if def != nil {
		pvc.Spec.StorageClassName = &def.Name
	}
	return nil
}

// Default returns the default storage class, the newest when several are
// marked (the one an administrator most likely just added), nil if none.
func Default(lister storagelisters.StorageClassLister) (*storagev1.StorageClass, error) {
	list, err := lister.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var def *storagev1.StorageClass
	for _, sc := range list {
		if sc.Annotations[isDefaultAnnotation] != "true" && sc.Annotations[betaIsDefaultAnnotation] != "true" {
			continue
		}
		if def == nil || sc.CreationTimestamp.After(def.CreationTimestamp.Time) ||
			(sc.CreationTimestamp.Equal(&def.CreationTimestamp) && sc.Name < def.Name) {
			def = sc
		}
	}
	return def, nil
}
