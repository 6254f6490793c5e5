package alwayspullimages

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/admission"
)

// Plugin forces the Always pull policy.
type Plugin struct {
	*admission.Handler
}

var (
	_ admission.MutationInterface   = (*Plugin)(nil)
	_ admission.ValidationInterface = (*Plugin)(nil)
)

func podOf(a admission.Attributes) (*corev1.Pod, bool) {
	if a.GetResource().GroupResource() != corev1.Resource("pods") {
		return nil, false
	}
	if s := a.GetSubresource(); s != "" && s != "ephemeralcontainers" {
		return nil, false
	}
	pod, ok := a.GetObject().(*corev1.Pod)
	return pod, ok
}

// each calls fn on every container of pod with its field path.
func each(pod *corev1.Pod, fn func(c *corev1.Container, p *field.Path)) {
	spec := field.NewPath("spec")
	for i := range pod.Spec.InitContainers {
		fn(&pod.Spec.InitContainers[i], spec.Child("initContainers").Index(i))
	}
	for i := range pod.Spec.Containers {
		fn(&pod.Spec.Containers[i], spec.Child("containers").Index(i))
	}
	for i := range pod.Spec.EphemeralContainers {
		fn((*corev1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon), spec.Child("ephemeralContainers").Index(i))
	}
}

// Admit implements admission.MutationInterface.
func (p *Plugin) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	pod, ok := podOf(a)
	if !ok {
		return nil
	}
	each(pod, func(c *corev1.Container, _ *field.Path) { c.ImagePullPolicy = corev1.PullAlways })
	return nil
}

// Validate implements admission.ValidationInterface: a later mutation may
// not undo the policy.
func (p *Plugin) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	pod, ok := podOf(a)
	if !ok {
		return nil
	}
	var errs field.ErrorList
	each(pod, func(c *corev1.Container, path *field.Path) {
		if c.ImagePullPolicy != corev1.PullAlways {
			errs = append(errs, field.NotSupported(path.Child("imagePullPolicy"), c.ImagePullPolicy, []string{string(corev1.PullAlways)}))
		}
	})
	if len(errs) > 0 {
		return admission.NewForbidden(a, errs.ToAggregate())
	}
	return nil
}
