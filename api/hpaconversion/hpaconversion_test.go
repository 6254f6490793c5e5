package hpaconversion

import (
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
)

func target() autoscalingv2.CrossVersionObjectReference {
	return autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: "web", APIVersion: "apps/v1"}
}

// TestRoundTrip checks that every v2 autoscaler reads back unchanged after
// a trip through v1, which is what a v1 client's read-modify-write does.
func TestRoundTrip(t *testing.T) {
	q := resource.MustParse("100m")
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	now := metav1.Unix(1700000000, 0) // the API keeps whole seconds
	tests := []struct {
		name string
		spec autoscalingv2.HorizontalPodAutoscalerSpec
		st   autoscalingv2.HorizontalPodAutoscalerStatus
	}{
		{name: "cpu only", spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: target(), MinReplicas: new(int32(2)), MaxReplicas: 5,
			Metrics: []autoscalingv2.MetricSpec{cpuMetric(60)}}},
		{name: "every source, behavior and status", spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: target(), MinReplicas: new(int32(1)), MaxReplicas: 9,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "qps", Selector: sel},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &q}}},
				{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{DescribedObject: target(), Metric: autoscalingv2.MetricIdentifier{Name: "hits"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: &q}}},
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &q}}},
				{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: corev1.ResourceCPU, Container: "app",
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: new(int32(50))}}},
				{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "queue"},
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &q}}},
				cpuMetric(70),
			},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: new(int32(60))}},
		}, st: autoscalingv2.HorizontalPodAutoscalerStatus{ObservedGeneration: new(int64(3)), LastScaleTime: &now, CurrentReplicas: 2, DesiredReplicas: 3,
			CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU,
				Current: autoscalingv2.MetricValueStatus{AverageUtilization: new(int32(64)), AverageValue: &q}}}},
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionTrue, Reason: "ReadyForNewScale", LastTransitionTime: now}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"team": "a"}}, Spec: tt.spec, Status: tt.st}
			var v1 autoscalingv1.HorizontalPodAutoscaler
			if err := ToV1(in, &v1); err != nil {
				t.Fatal(err)
			}
			var back autoscalingv2.HorizontalPodAutoscaler
			if err := ToV2(&v1, &back); err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(in, &back) {
				t.Errorf("round trip changed the autoscaler (-in +back):\n%s", diff.Diff(in, &back))
			}
			if in.Annotations["team"] != "a" || len(in.Annotations) != 1 {
				t.Errorf("conversion changed its input's annotations: %v", in.Annotations)
			}
		})
	}
}

func TestToV1(t *testing.T) {
	in := &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: target(), MaxReplicas: 4,
		Metrics: []autoscalingv2.MetricSpec{cpuMetric(55)}},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: new(int32(12))}}}}}}
	var out autoscalingv1.HorizontalPodAutoscaler
	if err := ToV1(in, &out); err != nil {
		t.Fatal(err)
	}
	if p := out.Spec.TargetCPUUtilizationPercentage; p == nil || *p != 55 {
		t.Errorf("targetCPUUtilizationPercentage = %v, want 55", p)
	}
	if p := out.Status.CurrentCPUUtilizationPercentage; p == nil || *p != 12 {
		t.Errorf("currentCPUUtilizationPercentage = %v, want 12", p)
	}
	if _, ok := out.Annotations[MetricsAnnotation]; ok {
		t.Errorf("a CPU-only autoscaler has a metrics annotation: %v", out.Annotations)
	}
}

func TestToV2(t *testing.T) {
	tests := []struct {
		name string
		in   autoscalingv1.HorizontalPodAutoscaler
		want []autoscalingv2.MetricSpec
	}{
		{"target given", autoscalingv1.HorizontalPodAutoscaler{Spec: autoscalingv1.HorizontalPodAutoscalerSpec{TargetCPUUtilizationPercentage: new(int32(30))}},
			[]autoscalingv2.MetricSpec{cpuMetric(30)}},
		{"no target: v1's implicit 80%", autoscalingv1.HorizontalPodAutoscaler{}, []autoscalingv2.MetricSpec{cpuMetric(80)}},
		{"malformed annotation ignored", autoscalingv1.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{MetricsAnnotation: "{"}}},
			[]autoscalingv2.MetricSpec{cpuMetric(80)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out autoscalingv2.HorizontalPodAutoscaler
			if err := ToV2(&tt.in, &out); err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(out.Spec.Metrics, tt.want) {
				t.Errorf("metrics = %+v, want %+v", out.Spec.Metrics, tt.want)
			}
			if len(out.Annotations) != 0 {
				t.Errorf("round-trip annotations kept: %v", out.Annotations)
			}
		})
	}
}

func TestScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddConversions(s); err != nil {
		t.Fatal(err)
	}
	in := &autoscalingv1.HorizontalPodAutoscalerList{Items: []autoscalingv1.HorizontalPodAutoscaler{{ObjectMeta: metav1.ObjectMeta{Name: "a"}}}}
	s.Default(in)
	if m := in.Items[0].Spec.MinReplicas; m == nil || *m != 1 {
		t.Errorf("minReplicas defaulted to %v, want 1", m)
	}
	var out autoscalingv2.HorizontalPodAutoscalerList
	if err := s.Convert(in, &out, nil); err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != 1 || out.Items[0].Name != "a" {
		t.Errorf("converted list %+v", out.Items)
	}
}
