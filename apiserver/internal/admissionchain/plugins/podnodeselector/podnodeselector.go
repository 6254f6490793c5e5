package podnodeselector

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/admission"
	genericinitializer "k8s.io/apiserver/pkg/admission/initializer"

	"trireme.dev/apiserver/internal/admissionchain/namespacelookup"
)

// annotation is where a namespace names its pods' node selector.
const annotation = "scheduler.alpha.kubernetes.io/node-selector"

// Plugin applies namespace node selectors.
type Plugin struct {
	namespacelookup.Namespaces
	// whitelists maps a namespace to the labels its pods may select, and
	// clusterDefaultKey to the default selector.
	whitelists map[string]string
}

var (
	_ admission.MutationInterface                         = (*Plugin)(nil)
	_ admission.ValidationInterface                       = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeClientSet       = (*Plugin)(nil)
	_ genericinitializer.WantsExternalKubeInformerFactory = (*Plugin)(nil)
)

func newPlugin(whitelists map[string]string) *Plugin {
	return &Plugin{Namespaces: namespacelookup.New(admission.Create), whitelists: whitelists}
}

// ValidateInitialization implements admission.InitializationValidator.
func (p *Plugin) ValidateInitialization() error {
	if err := p.Namespaces.ValidateInitialization(); err != nil {
		return fmt.Errorf("PodNodeSelector: %w", err)
	}
	for ns, sel := range p.whitelists {
		if _, err := labels.ConvertSelectorToLabelsMap(sel); err != nil {
			return fmt.Errorf("PodNodeSelector configuration for %s: %w", ns, err)
		}
	}
	return nil
}

func podOf(a admission.Attributes) (*corev1.Pod, bool) {
	if a.GetResource().GroupResource() != corev1.Resource("pods") || a.GetSubresource() != "" {
		return nil, false
	}
	pod, ok := a.GetObject().(*corev1.Pod)
	return pod, ok
}

// namespaceSelector is the namespace's annotation, or the cluster default
// when the namespace has none.
func (p *Plugin) namespaceSelector(ctx context.Context, a admission.Attributes) (labels.Set, error) {
	if !p.WaitForReady() {
		return nil, admission.NewForbidden(a, errors.New("not yet ready to handle request"))
	}
	ns, err := p.Get(ctx, a.GetNamespace())
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	sel, ok := ns.Annotations[annotation]
	if !ok {
		sel = p.whitelists[clusterDefaultKey]
	}
	set, err := labels.ConvertSelectorToLabelsMap(sel)
	if err != nil {
		return nil, admission.NewForbidden(a, fmt.Errorf("invalid node selector annotation on namespace %s: %w", ns.Name, err))
	}
	return set, nil
}

// Admit implements admission.MutationInterface.
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	pod, ok := podOf(a)
	if !ok {
		return nil
	}
	nsSel, err := p.namespaceSelector(ctx, a)
	if err != nil {
		return err
	}
	if labels.Conflicts(nsSel, labels.Set(pod.Spec.NodeSelector)) {
		return apierrors.NewForbidden(a.GetResource().GroupResource(), a.GetName(), errors.New("pod node label selector conflicts with its namespace node label selector"))
	}
	if len(nsSel) > 0 {
		pod.Spec.NodeSelector = labels.Merge(nsSel, pod.Spec.NodeSelector)
	}
	return nil
}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	pod, ok := podOf(a)
	if !ok {
		return nil
	}
	nsSel, err := p.namespaceSelector(ctx, a)
	if err != nil {
		return err
	}
	if !within(nsSel, labels.Set(pod.Spec.NodeSelector)) {
		return apierrors.NewForbidden(a.GetResource().GroupResource(), a.GetName(), errors.New("pod node label selector does not match the namespace node label selector"))
	}
	if wl, ok := p.whitelists[a.GetNamespace()]; ok {
		allowed, err := labels.ConvertSelectorToLabelsMap(wl)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		if !within(labels.Set(pod.Spec.NodeSelector), allowed) {
			return apierrors.NewForbidden(a.GetResource().GroupResource(), a.GetName(), errors.New("pod node label selector labels conflict with its namespace whitelist"))
		}
	}
	return nil
}

// within reports whether every label of set appears, with the same value,
// in allowed; an empty allowed set allows everything.
func within(set, allowed labels.Set) bool {
	if len(allowed) == 0 {
		return true
	}
	for k, v := range set {
		if w, ok := allowed[k]; !ok || w != v {
			return false
		}
	}
	return true
}
