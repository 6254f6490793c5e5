package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidatePodEphemeralContainersUpdate validates a write to the
// ephemeralcontainers subresource: the pod must stay valid, and existing
// ephemeral containers may be neither removed nor changed. Static pods have
// no API-side owner to run them, so they refuse ephemeral containers.
func ValidatePodEphemeralContainersUpdate(pod, old *corev1.Pod) field.ErrorList {
	if pod == nil || old == nil {
		return nil
	}
	errs := apimachineryvalidation.ValidateObjectMetaUpdate(&pod.ObjectMeta, &old.ObjectMeta, metadataPath)
	errs = append(errs, podRules(pod)...)
	errs = append(errs, podAnnotationChange(pod, old)...)
	if _, static := old.Annotations[mirrorPodAnnotation]; static {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods do not support ephemeral containers")}
	}
	p := specPath.Child("ephemeralContainers")
	byName := map[string]*corev1.EphemeralContainer{}
	for i := range pod.Spec.EphemeralContainers {
		byName[pod.Spec.EphemeralContainers[i].Name] = &pod.Spec.EphemeralContainers[i]
	}
	for _, o := range old.Spec.EphemeralContainers {
		n, ok := byName[o.Name]
		switch {
		case !ok:
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("existing ephemeral containers %q may not be removed\n", o.Name)))
		case !equality.Semantic.DeepEqual(o, *n):
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("existing ephemeral containers %q may not be changed", o.Name)))
		}
	}
	return errs
}

// ValidatePodBinding validates a Binding posted to a pod's binding
// subresource, which may only target a Node.
func ValidatePodBinding(b *corev1.Binding) field.ErrorList {
	if b == nil {
		return nil
	}
	var errs field.ErrorList
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		errs = append(errs, field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", "<empty>"}))
	}
	if b.Target.Name == "" {
		errs = append(errs, field.Required(field.NewPath("target", "name"), ""))
	}
	return errs
}
