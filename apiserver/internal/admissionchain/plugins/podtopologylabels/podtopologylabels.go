package podtopologylabels

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

// copied are the node labels a bound pod receives.
var copied = []string{corev1.LabelTopologyZone, corev1.LabelTopologyRegion}

// Plugin copies node topology labels onto bindings.
type Plugin struct {
	*admission.Handler
	client kubernetes.Interface
	nodes  corelisters.NodeLister
}

var (
	_ admission.MutationInterface                         = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeClientSet       = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
)

// SetExternalKubeClientSet implements WantsExternalKubeClientSet.
func (p *Plugin) SetExternalKubeClientSet(c kubernetes.Interface) { p.client = c }

// SetExternalKubeInformerFactory implements WantsExternalKubeInformerFactory.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	inf := f.Core().V1().Nodes()
	p.nodes = inf.Lister()
	p.SetReadyFunc(inf.Informer().HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.client == nil || p.nodes == nil {
		return errors.New("PodTopologyLabels needs a client and an informer factory")
	}
	return nil
}

// Admit implements admission.MutationInterface.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != corev1.Resource("pods") || a.GetSubresource() != "binding" {
		return nil
	}
	binding, ok := a.GetObject().(*corev1.Binding)
	if !ok || binding.Target.Kind != "Node" && binding.Target.Kind != "" {
		return nil
	}
	if !p.WaitForReady() {
		return admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	node, err := p.nodes.Get(binding.Target.Name)
	if apierrors.IsNotFound(err) {
		node, err = p.client.CoreV1().Nodes().Get(ctx, binding.Target.Name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		// Binding to a missing node fails later with its own error.
		return nil
	}
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	for _, k := range copied {
		v, ok := node.Labels[k]
		if !ok {
			continue
		}
		if binding.Labels == nil {
			binding.Labels = map[string]string{}
		}
		binding.Labels[k] = v
	}
	return nil
}
