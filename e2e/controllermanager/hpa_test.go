package controllermanager_test

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testwait"
)

// testHorizontalPodAutoscaler checks the parts that need no metrics
// server: the target's scale subresource is read and written (a target
// below minReplicas is raised to it) and, with no metrics API served, the
// conditions say so.
func testHorizontalPodAutoscaler(t *testing.T, cs kubernetes.Interface) {
	ctx := context.Background()
	const ns = "hpa-e2e"
	makeNamespace(t, cs, ns)
	labels := map[string]string{"app": "web"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "busybox"}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](3),
			MaxReplicas:    5,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)},
			}}},
		},
	}
	if _, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, hpa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, nodesTestTimeout, "deployment scaled to minReplicas 3", func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && ptr.Deref(d.Spec.Replicas, 0) == 3, err
	})
	conditionIs := func(h *autoscalingv2.HorizontalPodAutoscaler, ct autoscalingv2.HorizontalPodAutoscalerConditionType, s corev1.ConditionStatus, reason string) bool {
		for _, c := range h.Status.Conditions {
			if c.Type == ct {
				return c.Status == s && c.Reason == reason
			}
		}
		return false
	}
	testwait.For(t, nodesTestTimeout, "autoscaler reports no metrics", func(ctx context.Context) (bool, error) {
		h, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return conditionIs(h, autoscalingv2.AbleToScale, corev1.ConditionTrue, "SucceededGetScale") &&
			conditionIs(h, autoscalingv2.ScalingActive, corev1.ConditionFalse, "FailedGetResourceMetric"), nil
	})

	// A target that does not exist: a Warning Event and a condition, and
	// the first autoscaler keeps working.
	broken := hpa.DeepCopy()
	broken.Name = "broken"
	broken.Spec.ScaleTargetRef.Name = "nowhere"
	if _, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, broken, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, nodesTestTimeout, "Warning FailedGetScale event for the broken autoscaler", func(ctx context.Context) (bool, error) {
		events, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=broken"})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Type == corev1.EventTypeWarning && e.Reason == "FailedGetScale" {
				return true, nil
			}
		}
		return false, nil
	})
	testwait.For(t, nodesTestTimeout, "broken autoscaler reports FailedGetScale", func(ctx context.Context) (bool, error) {
		h, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "broken", metav1.GetOptions{})
		return err == nil && conditionIs(h, autoscalingv2.AbleToScale, corev1.ConditionFalse, "FailedGetScale"), err
	})
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Replicas = ptr.To[int32](1)
	if _, err := cs.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, nodesTestTimeout, "deployment scaled back to minReplicas 3", func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && ptr.Deref(d.Spec.Replicas, 0) == 3, err
	})
}
