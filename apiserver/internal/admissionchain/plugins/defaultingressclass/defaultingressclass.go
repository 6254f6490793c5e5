package defaultingressclass

import (
	"context"
	"errors"
	"fmt"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
)

// legacyClassAnnotation is the pre-IngressClass way to pick a controller;
// an Ingress using it has chosen.
const legacyClassAnnotation = "kubernetes.io/ingress.class"

// Plugin defaults Ingress classes.
type Plugin struct {
	*admission.Handler
	lister networkinglisters.IngressClassLister
}

var (
	_ admission.MutationInterface                         = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
)

// SetExternalKubeInformerFactory implements WantsExternalKubeInformerFactory.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	inf := f.Networking().V1().IngressClasses()
	p.lister = inf.Lister()
	p.SetReadyFunc(inf.Informer().HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.lister == nil {
		return errors.New("DefaultIngressClass needs an informer factory")
	}
	return nil
}

// Admit implements admission.MutationInterface.
func (p *Plugin) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != networkingv1.Resource("ingresses") || a.GetSubresource() != "" {
		return nil
	}
	ing, ok := a.GetObject().(*networkingv1.Ingress)
	if !ok || ing.Spec.IngressClassName != nil {
		return nil
	}
	if _, ok := ing.Annotations[legacyClassAnnotation]; ok {
		return nil
	}
	if !p.WaitForReady() {
		return admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	list, err := p.lister.List(labels.Everything())
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("failed to list ingress classes: %w", err))
	}
	var def *networkingv1.IngressClass
	for _, ic := range list {
		if ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] != "true" {
			continue
		}
		// The newest default wins, so adding a new default takes effect.
		if def == nil || ic.CreationTimestamp.After(def.CreationTimestamp.Time) ||
			(ic.CreationTimestamp.Equal(&def.CreationTimestamp) && ic.Name < def.Name) {
			def = ic
		}
	}
	if def != nil {
		ing.Spec.IngressClassName = &def.Name
	}
	return nil
}
