package printers

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkToTablePods measures `kubectl get pods` rendering of 1,000 pods.
func BenchmarkToTablePods(b *testing.B) {
	list := &corev1.PodList{}
	for i := range 1000 {
		list.Items = append(list.Items, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", i), Namespace: "demo", CreationTimestamp: metav1.Now()},
			Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.0.5", ContainerStatuses: []corev1.ContainerStatus{{
				Name: "c", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}},
			}}},
		})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ToTable(list, false); err != nil {
			b.Fatal(err)
		}
	}
}
