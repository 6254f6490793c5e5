package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"trireme.dev/api/qos"
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

// ValidatePodResize validates a write to the resize subresource, as
// upstream's: the pod stays valid; static and Windows pods are never
// resized; the QoS class stays; containers are neither added, removed,
// renamed nor reordered; requests and limits may change but not be removed,
// and only cpu and memory may change; a non-sidecar init container with a
// RestartContainer policy is not resized.
func ValidatePodResize(pod, old *corev1.Pod) field.ErrorList {
	if pod == nil || old == nil {
		return nil
	}
	errs := apimachineryvalidation.ValidateObjectMetaUpdate(&pod.ObjectMeta, &old.ObjectMeta, metadataPath)
	errs = append(errs, podRules(pod)...)
	if _, static := old.Annotations[mirrorPodAnnotation]; static {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods cannot be resized")}
	}
	if old.Spec.OS != nil && old.Spec.OS.Name == corev1.Windows {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "windows pods cannot be resized")}
	}
	oldQOS := old.Status.QOSClass
	if oldQOS == "" {
		oldQOS = qos.PodQOSClass(old)
	}
	if qos.PodQOSClass(pod) != oldQOS {
		errs = append(errs, field.Invalid(specPath, pod.Status.QOSClass, "Pod QOS Class may not change as a result of resizing"))
	}
	if order := resizeOrder(pod, old); len(order) > 0 {
		return append(errs, order...)
	}
	for i := range old.Spec.InitContainers {
		errs = append(errs, resizeRemovals(&pod.Spec.InitContainers[i].Resources, &old.Spec.InitContainers[i].Resources, specPath.Child("initContainers").Index(i).Child("resources"))...)
	}
	for i := range old.Spec.Containers {
		errs = append(errs, resizeRemovals(&pod.Spec.Containers[i].Resources, &old.Spec.Containers[i].Resources, specPath.Child("containers").Index(i).Child("resources"))...)
	}
	for i := range pod.Spec.Containers {
		if !onlyCPUMemoryChanged(&pod.Spec.Containers[i], &old.Spec.Containers[i]) {
			errs = append(errs, field.Forbidden(specPath, "only cpu and memory resources are mutable"))
		}
	}
	for i := range pod.Spec.InitContainers {
		c, o := &pod.Spec.InitContainers[i], &old.Spec.InitContainers[i]
		if !onlyCPUMemoryChanged(c, o) {
			errs = append(errs, field.Forbidden(specPath.Child("initContainers").Index(i), "only cpu and memory resources for init or sidecar containers are mutable"))
		}
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		if sidecar || equality.Semantic.DeepEqual(c, o) {
			continue
		}
		for _, p := range c.ResizePolicy {
			if p.RestartPolicy == corev1.RestartContainer {
				errs = append(errs, field.Forbidden(specPath.Child("initContainers").Index(i), "non-sidecar init containers with a resize policy of RestartContainer cannot be resized"))
			}
		}
	}
	return errs
}

// resizeOrder refuses containers added, removed, renamed or reordered.
func resizeOrder(pod, old *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	check := func(name string, cur, prev []corev1.Container) {
		p := specPath.Child(name)
		if len(cur) != len(prev) {
			errs = append(errs, field.Forbidden(p, name+" may not be added or removed on resize"))
			return
		}
		for i := range prev {
			if cur[i].Name != prev[i].Name {
				errs = append(errs, field.Forbidden(p.Index(i).Child("name"), name+" may not be renamed or reordered on resize"))
			}
		}
	}
	check("containers", pod.Spec.Containers, old.Spec.Containers)
	check("initContainers", pod.Spec.InitContainers, old.Spec.InitContainers)
	return errs
}

// resizeRemovals refuses requests or limits a resize removes.
func resizeRemovals(cur, prev *corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if removed(cur.Requests, prev.Requests) {
		errs = append(errs, field.Forbidden(p.Child("requests"), "resource requests cannot be removed"))
	}
	if removed(cur.Limits, prev.Limits) {
		errs = append(errs, field.Forbidden(p.Child("limits"), "resource limits cannot be removed"))
	}
	return errs
}

func removed(cur, prev corev1.ResourceList) bool {
	for name := range prev {
		if _, ok := cur[name]; !ok {
			return true
		}
	}
	return false
}

// onlyCPUMemoryChanged says whether c differs from old in its cpu and
// memory requests and limits at most (its resize policy is as immutable as
// the rest, as upstream has it).
func onlyCPUMemoryChanged(c, old *corev1.Container) bool {
	masked := c.DeepCopy()
	masked.Resources.Requests = withCPUMemoryOf(masked.Resources.Requests, old.Resources.Requests)
	masked.Resources.Limits = withCPUMemoryOf(masked.Resources.Limits, old.Resources.Limits)
	return equality.Semantic.DeepEqual(masked, old)
}

// withCPUMemoryOf is list with its cpu and memory as in old's.
func withCPUMemoryOf(list, old corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range list {
		if name != corev1.ResourceCPU && name != corev1.ResourceMemory {
			out[name] = q
		}
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := old[name]; ok {
			out[name] = q
		}
	}
	return out
}
