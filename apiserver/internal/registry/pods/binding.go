package pods

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	storeerr "k8s.io/apiserver/pkg/storage/errors"

	"trireme.dev/api/validation"
	"trireme.dev/apiserver/internal/registry"
)

// BindingStore serves pods/binding: the scheduler's way to assign a pod to
// a node. It writes spec.nodeName, which no pod update may change.
type BindingStore struct {
	pods *registry.Store
}

// NewBindingStore returns the binding subresource of pods.
func NewBindingStore(pods *registry.Store) *BindingStore { return &BindingStore{pods: pods} }

// New implements rest.Storage.
func (b *BindingStore) New() runtime.Object { return &corev1.Binding{} }

// Destroy implements rest.Storage.
func (b *BindingStore) Destroy() {}

// Create implements rest.NamedCreater.
func (b *BindingStore) Create(ctx context.Context, name string, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	binding, ok := obj.(*corev1.Binding)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a Binding: %T", obj))
	}
	if name != binding.Name {
		return nil, apierrors.NewBadRequest("name in URL does not match name in Binding object")
	}
	if errs := validation.ValidatePodBinding(binding); len(errs) > 0 {
		return nil, apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Binding").GroupKind(), binding.Name, errs)
	}
	if createValidation != nil {
		if err := createValidation(ctx, binding); err != nil {
			return nil, err
		}
	}
	if len(options.DryRun) > 0 {
		return &metav1.Status{Status: metav1.StatusSuccess, Code: 201}, nil
	}
	key, err := b.pods.KeyFunc(ctx, binding.Name)
	if err != nil {
		return nil, err
	}
	var precondition *storage.Preconditions
	if binding.UID != "" {
		precondition = &storage.Preconditions{UID: &binding.UID}
	}
	err = b.pods.Storage.GuaranteedUpdate(ctx, key, &corev1.Pod{}, false, precondition, storage.SimpleUpdate(func(obj runtime.Object) (runtime.Object, error) {
		pod := obj.(*corev1.Pod)
		if pod.DeletionTimestamp != nil {
			return nil, apierrors.NewConflict(corev1.Resource("pods/binding"), pod.Name, fmt.Errorf("pod %s is being deleted, cannot be assigned to a host", pod.Name))
		}
		if pod.Spec.NodeName != "" {
			return nil, apierrors.NewConflict(corev1.Resource("pods/binding"), pod.Name, fmt.Errorf("pod %s is already assigned to node %q", pod.Name, pod.Spec.NodeName))
		}
		pod.Spec.NodeName = binding.Target.Name
		if pod.Annotations == nil && len(binding.Annotations) > 0 {
			pod.Annotations = map[string]string{}
		}
		for k, v := range binding.Annotations {
			pod.Annotations[k] = v
		}
		copyTopologyLabels(pod, binding)
		setScheduled(pod)
		return pod, nil
	}), false, nil)
	if err != nil {
		// Storage errors (a missing pod, a UID precondition) become API statuses.
		return nil, storeerr.InterpretUpdateError(err, corev1.Resource("pods"), binding.Name)
	}
	return &metav1.Status{Status: metav1.StatusSuccess, Code: 201}, nil
}

// topologyLabelPrefix marks the node labels the PodTopologyLabels
// admission plugin copies onto a binding, so a pod can read its zone and
// region through the downward API.
const topologyLabelPrefix = "topology.kubernetes.io/"

// copyTopologyLabels moves the binding's topology labels onto the pod.
func copyTopologyLabels(pod *corev1.Pod, binding *corev1.Binding) {
	for k, v := range binding.Labels {
		if !strings.HasPrefix(k, topologyLabelPrefix) {
			continue
		}
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		pod.Labels[k] = v
	}
}

// setScheduled records the PodScheduled condition as true.
func setScheduled(pod *corev1.Pod) {
	now := metav1.Now()
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		if c.Type == corev1.PodScheduled {
			if c.Status != corev1.ConditionTrue {
				c.LastTransitionTime = now
			}
			c.Status, c.Reason, c.Message = corev1.ConditionTrue, "", ""
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{
		Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now,
	})
}
