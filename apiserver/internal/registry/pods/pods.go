package pods

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"trireme.dev/api/defaults"
	"trireme.dev/api/qos"
	"trireme.dev/apiserver/internal/registry"
)

// defaultGracePeriod is used when neither the delete nor the pod names one.
const defaultGracePeriod int64 = 30

// Resource describes the pods resource.
func Resource() *registry.Resource {
	return &registry.Resource{
		GroupVersion: corev1.SchemeGroupVersion,
		Name:         "pods",
		Kind:         "Pod",
		New:          func() runtime.Object { return &corev1.Pod{} },
		NewList:      func() runtime.Object { return &corev1.PodList{} },
		Namespaced:   true,
		Status:       true,
		Generation:   true,
		ShortNames:   []string{"po"},
		Categories:   []string{"all"},
		Hooks: registry.Hooks{
			PrepareForCreate: func(_ context.Context, obj runtime.Object) {
				pod := obj.(*corev1.Pod)
				// Upstream defaults pod-level resources at create, not on
				// every decode, and before the QoS class is computed.
				defaults.PodLevelResources(pod)
				pod.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: qos.PodQOSClass(pod)}
			},
			PrepareForStatusUpdate: func(_ context.Context, obj, old runtime.Object) {
				// The status subresource never starts or stops a deletion.
				obj.(*corev1.Pod).DeletionTimestamp = old.(*corev1.Pod).DeletionTimestamp
			},
			CheckGracefulDelete: checkGracefulDelete,
		},
	}
}

// checkGracefulDelete picks the grace period of a pod deletion: the request's,
// else the pod's terminationGracePeriodSeconds, and zero for pods no kubelet
// will ever stop (never scheduled, or already finished).
func checkGracefulDelete(_ context.Context, obj runtime.Object, options *metav1.DeleteOptions) bool {
	if options == nil {
		return false
	}
	pod := obj.(*corev1.Pod)
	period := defaultGracePeriod
	switch {
	case options.GracePeriodSeconds != nil:
		period = *options.GracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		period = *pod.Spec.TerminationGracePeriodSeconds
	}
	if pod.Spec.NodeName == "" || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		period = 0
	}
	// A negative period is a request for the minimum, as upstream treats it.
	if period < 0 {
		period = 1
	}
	options.GracePeriodSeconds = &period
	return true
}

func labelsOf(pod *corev1.Pod) labels.Set { return labels.Set(pod.Labels) }
