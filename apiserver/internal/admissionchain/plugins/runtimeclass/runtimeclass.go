package runtimeclass

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	nodelisters "k8s.io/client-go/listers/node/v1"
)

// Plugin applies RuntimeClasses to pods.
type Plugin struct {
	*admission.Handler
	client kubernetes.Interface
	lister nodelisters.RuntimeClassLister
}

var (
	_ admission.MutationInterface                         = (*Plugin)(nil)
	_ admission.ValidationInterface                       = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeClientSet       = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
)

// SetExternalKubeClientSet implements WantsExternalKubeClientSet.
func (p *Plugin) SetExternalKubeClientSet(c kubernetes.Interface) { p.client = c }

// SetExternalKubeInformerFactory implements WantsExternalKubeInformerFactory.
func (p *Plugin) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	inf := f.Node().V1().RuntimeClasses()
	p.lister = inf.Lister()
	p.SetReadyFunc(inf.Informer().HasSynced)
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if p.client == nil || p.lister == nil {
		return errors.New("RuntimeClass needs a client and an informer factory")
	}
	return nil
}

func podOf(a admission.Attributes) (*corev1.Pod, bool) {
	if a.GetResource().GroupResource() != corev1.Resource("pods") || a.GetSubresource() != "" {
		return nil, false
	}
	pod, ok := a.GetObject().(*corev1.Pod)
	return pod, ok && pod.Spec.RuntimeClassName != nil && *pod.Spec.RuntimeClassName != ""
}

func (p *Plugin) runtimeClass(ctx context.Context, a admission.Attributes, name string) (*nodev1.RuntimeClass, error) {
	if !p.WaitForReady() {
		return nil, admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	rc, err := p.lister.Get(name)
	if apierrors.IsNotFound(err) {
		rc, err = p.client.NodeV1().RuntimeClasses().Get(ctx, name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, admission.NewForbidden(a, fmt.Errorf("pod rejected: RuntimeClass %q not found", name))
	}
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return rc, nil
}

// Admit implements admission.MutationInterface.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	pod, ok := podOf(a)
	if !ok {
		return nil
	}
	rc, err := p.runtimeClass(ctx, a, *pod.Spec.RuntimeClassName)
	if err != nil {
		return err
	}
	if rc.Overhead != nil && pod.Spec.Overhead == nil {
		pod.Spec.Overhead = rc.Overhead.PodFixed.DeepCopy()
	}
	if s := rc.Scheduling; s != nil {
		for k, v := range s.NodeSelector {
			if have, ok := pod.Spec.NodeSelector[k]; ok && have != v {
				return admission.NewForbidden(a, fmt.Errorf("conflict: runtimeClass.scheduling.nodeSelector[%s] = %s; pod.spec.nodeSelector[%s] = %s", k, v, k, have))
			}
			if pod.Spec.NodeSelector == nil {
				pod.Spec.NodeSelector = map[string]string{}
			}
			pod.Spec.NodeSelector[k] = v
		}
		for _, t := range s.Tolerations {
			dup := false
			for _, have := range pod.Spec.Tolerations {
				if apiequality.Semantic.DeepEqual(have, t) {
					dup = true
				}
			}
			if !dup {
				pod.Spec.Tolerations = append(pod.Spec.Tolerations, t)
			}
		}
	}
	return nil
}

// Validate implements admission.ValidationInterface: a pod's own overhead
// must be the class's.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	pod, ok := podOf(a)
	if !ok {
		return nil
	}
	rc, err := p.runtimeClass(ctx, a, *pod.Spec.RuntimeClassName)
	if err != nil {
		return err
	}
	var want corev1.ResourceList
	if rc.Overhead != nil {
		want = rc.Overhead.PodFixed
	}
	if pod.Spec.Overhead != nil && !apiequality.Semantic.DeepEqual(pod.Spec.Overhead, want) {
		return admission.NewForbidden(a, errors.New("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"))
	}
	if pod.Spec.Overhead == nil && len(want) > 0 {
		return admission.NewForbidden(a, errors.New("pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"))
	}
	return nil
}
