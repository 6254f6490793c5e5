package pods

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"trireme.dev/api/qos"
	"trireme.dev/api/validation"
	"trireme.dev/apiserver/internal/registry"
)

// NewEphemeralContainersStore returns pods/ephemeralcontainers, through
// which `kubectl debug` adds containers to a running pod. Ephemeral
// containers can be added but never changed or removed.
func NewEphemeralContainersStore(pods *registry.Store) *registry.SubresourceStore {
	return registry.NewPartStore(pods, registry.PartUpdate{
		Prepare: func(obj, old runtime.Object) {
			pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
			ephemeral := pod.Spec.EphemeralContainers
			*pod = *oldPod.DeepCopy()
			pod.Spec.EphemeralContainers = ephemeral
		},
		Validate: func(obj, old runtime.Object) field.ErrorList {
			return validation.ValidatePodEphemeralContainersUpdate(obj.(*corev1.Pod), old.(*corev1.Pod))
		},
	})
}

// NewResizeStore returns pods/resize, through which the resources of a
// running pod's containers change in place.
func NewResizeStore(pods *registry.Store) *registry.SubresourceStore {
	return registry.NewPartStore(pods, registry.PartUpdate{
		Prepare: func(obj, old runtime.Object) {
			pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
			resized := oldPod.DeepCopy()
			for i := range resized.Spec.Containers {
				if i < len(pod.Spec.Containers) && pod.Spec.Containers[i].Name == resized.Spec.Containers[i].Name {
					resized.Spec.Containers[i].Resources = pod.Spec.Containers[i].Resources
					resized.Spec.Containers[i].ResizePolicy = pod.Spec.Containers[i].ResizePolicy
				}
			}
			resized.ObjectMeta.ResourceVersion = pod.ResourceVersion
			*pod = *resized
		},
		Validate: func(obj, old runtime.Object) field.ErrorList {
			pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
			errs := validation.ValidateCreate(pod)
			if qos.PodQOSClass(pod) != qos.PodQOSClass(oldPod) {
				errs = append(errs, field.Forbidden(field.NewPath("spec", "containers"), "Pod QOS Class may not change as a result of resizing"))
			}
			return errs
		},
	})
}
