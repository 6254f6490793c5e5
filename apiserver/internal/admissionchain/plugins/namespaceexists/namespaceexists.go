package namespaceexists

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// Plugin refuses requests in missing namespaces.
type Plugin struct {
	*admission.Handler
	client kubernetes.Interface
	lister corelisters.NamespaceLister
}

var (
	_ admission.ValidationInterface                       = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeClientSet       = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
)

// SetExternalKubeClientSet implements WantsExternalKubeClientSet.
func (p *Plugin) SetExternalKubeClientSet(c kubernetes.Interface) { p.client = c }

// SetExternalKubeInformerFactory implements WantsExternalKubeInformerFactory.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	inf := f.Core().V1().Namespaces()
	p.lister = inf.Lister()
	p.SetReadyFunc(inf.Informer().HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.client == nil || p.lister == nil {
		return errors.New("NamespaceExists needs a client and an informer factory")
	}
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetNamespace() == "" || a.GetKind().GroupKind() == corev1.SchemeGroupVersion.WithKind("Namespace").GroupKind() {
		return nil
	}
	if !p.WaitForReady() {
		return admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	if _, err := p.lister.Get(a.GetNamespace()); err == nil || !apierrors.IsNotFound(err) {
		return nil
	}
	// The cache may lag a namespace created just now.
	_, err := p.client.CoreV1().Namespaces().Get(ctx, a.GetNamespace(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	return nil
}
