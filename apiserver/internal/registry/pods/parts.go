package pods

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

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
// running pod's containers change in place. As upstream's, a write keeps
// only the containers' resources and resize policies from the pod it is
// given (validation then refuses anything but cpu and memory changing);
// containers added, removed, renamed or reordered are kept for validation
// to refuse.
func NewResizeStore(pods *registry.Store) *registry.SubresourceStore {
	return registry.NewPartStore(pods, registry.PartUpdate{
		Prepare: func(obj, old runtime.Object) {
			pod, oldPod := obj.(*corev1.Pod), old.(*corev1.Pod)
			containers, ok := resizedContainers(pod.Spec.Containers, oldPod.Spec.Containers)
			inits, initsOK := resizedContainers(pod.Spec.InitContainers, oldPod.Spec.InitContainers)
			if !ok || !initsOK {
				return
			}
			resized := oldPod.DeepCopy()
			resized.Spec.Containers, resized.Spec.InitContainers = containers, inits
			resized.ObjectMeta.ResourceVersion = pod.ResourceVersion
			*pod = *resized
		},
		Validate: func(obj, old runtime.Object) field.ErrorList {
			return validation.ValidatePodResize(obj.(*corev1.Pod), old.(*corev1.Pod))
		},
	})
}

// resizedContainers is old with each container's resources and resize
// policy from cur; false when cur renames, reorders, adds or removes
// containers.
func resizedContainers(cur, old []corev1.Container) ([]corev1.Container, bool) {
	if len(cur) != len(old) {
		return nil, false
	}
	out := make([]corev1.Container, len(old))
	for i := range old {
		if cur[i].Name != old[i].Name {
			return nil, false
		}
		out[i] = *old[i].DeepCopy()
		out[i].Resources = *cur[i].Resources.DeepCopy()
		out[i].ResizePolicy = cur[i].ResizePolicy
	}
	return out, true
}
