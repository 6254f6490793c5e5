package defaults

import (
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
)

// PriorityClass lets pods of the class preempt lower-priority pods unless it
// says otherwise. A pod's own preemptionPolicy is not a default: the
// Priority admission plugin copies it from the class.
func PriorityClass(pc *schedulingv1.PriorityClass) {
	if pc.PreemptionPolicy == nil {
		pc.PreemptionPolicy = new(corev1.PreemptLowerPriority)
	}
}
