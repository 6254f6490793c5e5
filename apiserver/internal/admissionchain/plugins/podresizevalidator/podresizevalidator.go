package podresizevalidator

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	resourcehelper "k8s.io/component-helpers/resource"

	"trireme.dev/apiserver/internal/admissionchain/nodelookup"
)

// Plugin checks resizes against the pod's node.
type Plugin struct {
	*admission.Handler
	nodelookup.Nodes
}

var _ admission.ValidationInterface = (*Plugin)(nil)

// New returns the PodResizeValidator plugin.
func New() *Plugin {
	return &Plugin{Handler: admission.NewHandler(admission.Update)}
}

// resizable are the resources a resize may change.
var resizable = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// Validate implements admission.ValidationInterface.
func (p *Plugin) Validate(ctx context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != corev1.Resource("pods") || a.GetSubresource() != "resize" {
		return nil
	}
	pod, ok := a.GetObject().(*corev1.Pod)
	if !ok || pod.Spec.NodeName == "" {
		// An unscheduled pod's resize is the scheduler's to place.
		return nil
	}
	if old, ok := a.GetOldObject().(*corev1.Pod); ok && old.Generation != 0 && old.Generation == pod.Generation {
		// The spec did not change (generation moves with it): nothing
		// was resized, as upstream's plugin skips such writes.
		return nil
	}
	if pod.Spec.OS != nil && pod.Spec.OS.Name == corev1.Windows {
		return admission.NewForbidden(a, fmt.Errorf("in-place resize of containers is not supported on Windows"))
	}
	node, err := p.Get(ctx, pod.Spec.NodeName)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if node == nil {
		return nil
	}
	if node.Labels[corev1.LabelOSStable] == string(corev1.Windows) {
		return admission.NewForbidden(a, fmt.Errorf("in-place resize of containers is not supported on Windows node %s", node.Name))
	}
	if err := fits(pod, node); err != nil {
		return withCause(admission.NewForbidden(a, err), causeNodeCapacity)
	}
	return nil
}

// causeNodeCapacity is the cause upstream's plugin gives a resize beyond
// the node's allocatable; clients tell it from other refusals by it.
const causeNodeCapacity metav1.CauseType = "NodeCapacity"

// withCause adds cause to a status error's details.
func withCause(err error, cause metav1.CauseType) error {
	var status *apierrors.StatusError
	if errors.As(err, &status) {
		if status.ErrStatus.Details == nil {
			status.ErrStatus.Details = &metav1.StatusDetails{}
		}
		status.ErrStatus.Details.Causes = append(status.ErrStatus.Details.Causes, metav1.StatusCause{Type: cause})
	}
	return err
}

// fits reports, in the words of the kubelet's Infeasible status, the first
// resizable resource the pod would request beyond the node's allocatable.
// Other pods' requests are left to the kubelet: they change, the node's
// size does not.
func fits(pod *corev1.Pod, node *corev1.Node) error {
	requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	for _, name := range resizable {
		allocatable, ok := node.Status.Allocatable[name]
		if !ok {
			continue
		}
		requested := requests[name]
		if requested.Cmp(allocatable) <= 0 {
			continue
		}
		want, capacity := requested.Value(), allocatable.Value()
		if name == corev1.ResourceCPU {
			want, capacity = requested.MilliValue(), allocatable.MilliValue()
		}
		//lint:ignore ST1005 the kubelet's message, word for word: clients match on it.
		return fmt.Errorf("Node didn't have enough capacity: %s, requested: %d, capacity: %d", name, want, capacity)
	}
	return nil
}
