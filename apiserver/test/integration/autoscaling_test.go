package integration

import (
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestHorizontalPodAutoscalerVersions checks that autoscaling/v1 and
// autoscaling/v2 are two views of one object: v1's CPU target is v2's CPU
// metric, and what v1 has no field for survives a v1 client's update.
func TestHorizontalPodAutoscalerVersions(t *testing.T) {
	ns := newNamespace(t)
	ctx := testContext(t)
	v1api, v2api := client.AutoscalingV1().HorizontalPodAutoscalers(ns), client.AutoscalingV2().HorizontalPodAutoscalers(ns)

	created, err := v1api.Create(ctx, &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef:                 autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MaxReplicas:                    4,
			TargetCPUUtilizationPercentage: ptr.To[int32](40),
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := created.Spec.MinReplicas; m == nil || *m != 1 {
		t.Errorf("v1 minReplicas = %v, want the default 1", m)
	}
	v2, err := v2api.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(v2.Spec.Metrics) != 1 || v2.Spec.Metrics[0].Resource == nil || v2.Spec.Metrics[0].Resource.Name != corev1.ResourceCPU ||
		ptr.Deref(v2.Spec.Metrics[0].Resource.Target.AverageUtilization, 0) != 40 {
		t.Fatalf("v2 metrics = %+v, want CPU utilization 40", v2.Spec.Metrics)
	}

	// A v2 client adds a memory metric; a v1 client then changes the CPU
	// target and writes back what it read.
	v2.Spec.Metrics = append(v2.Spec.Metrics, autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](70)}}})
	if _, err := v2api.Update(ctx, v2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	v1, err := v1api.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v1.Spec.TargetCPUUtilizationPercentage = ptr.To[int32](60)
	if _, err := v1api.Update(ctx, v1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	v2, err = v2api.Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[corev1.ResourceName]int32{}
	for _, m := range v2.Spec.Metrics {
		if m.Resource != nil {
			got[m.Resource.Name] = ptr.Deref(m.Resource.Target.AverageUtilization, 0)
		}
	}
	if len(v2.Spec.Metrics) != 2 || got[corev1.ResourceCPU] != 60 || got[corev1.ResourceMemory] != 70 {
		t.Errorf("after the v1 update, v2 metrics = %+v; want CPU 60 and memory 70", v2.Spec.Metrics)
	}
	if len(v2.Annotations) != 0 {
		t.Errorf("v1's round-trip annotations were stored: %v", v2.Annotations)
	}
	list, err := v1api.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || ptr.Deref(list.Items[0].Spec.TargetCPUUtilizationPercentage, 0) != 60 {
		t.Errorf("v1 list = %+v, %v", list, err)
	}
}
