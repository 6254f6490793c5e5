package defaults

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
)

// Expected values: upstream pkg/apis/scheduling/v1/defaults.go
// SetDefaults_PriorityClass.
func TestPriorityClass(t *testing.T) {
	runDefaulting(t, PriorityClass, []defaultingCase[schedulingv1.PriorityClass]{
		{
			name: "preempt lower priority",
			in:   &schedulingv1.PriorityClass{Value: 1000},
			want: &schedulingv1.PriorityClass{Value: 1000, PreemptionPolicy: new(corev1.PreemptLowerPriority)},
		},
		{
			name: "never kept",
			in:   &schedulingv1.PriorityClass{PreemptionPolicy: new(corev1.PreemptNever)},
			want: &schedulingv1.PriorityClass{PreemptionPolicy: new(corev1.PreemptNever)},
		},
	})
}
