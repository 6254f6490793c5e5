package defaults

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Expected values: upstream pkg/apis/autoscaling/v2/defaults.go
// SetDefaults_HorizontalPodAutoscaler (minReplicas 1, CPU 80%) and
// SetDefaults_HorizontalPodAutoscalerBehavior with defaultHPAScaleUpRules /
// defaultHPAScaleDownRules.
func TestHorizontalPodAutoscaler(t *testing.T) {
	cpu80 := []autoscalingv2.MetricSpec{{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{
			Type: autoscalingv2.UtilizationMetricType, AverageUtilization: new(int32(80)),
		}},
	}}
	memory := []autoscalingv2.MetricSpec{{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{
			Type: autoscalingv2.AverageValueMetricType, AverageValue: new(resource.MustParse("1Gi")),
		}},
	}}
	maxPolicy := new(autoscalingv2.MaxChangePolicySelect)
	runDefaulting(t, HorizontalPodAutoscaler, []defaultingCase[autoscalingv2.HorizontalPodAutoscaler]{
		{
			name: "no metrics and no behavior",
			in:   &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 5}},
			want: &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				MaxReplicas: 5, MinReplicas: new(int32(1)), Metrics: cpu80,
			}},
		},
		{
			name: "behavior with scale down window only",
			in: &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				MinReplicas: new(int32(2)), MaxReplicas: 5, Metrics: memory,
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: new(int32(60))}},
			}},
			want: &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				MinReplicas: new(int32(2)), MaxReplicas: 5, Metrics: memory,
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
					ScaleUp: &autoscalingv2.HPAScalingRules{
						StabilizationWindowSeconds: new(int32(0)), SelectPolicy: maxPolicy,
						Policies: []autoscalingv2.HPAScalingPolicy{
							{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
							{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
						},
					},
					ScaleDown: &autoscalingv2.HPAScalingRules{
						StabilizationWindowSeconds: new(int32(60)), SelectPolicy: maxPolicy,
						Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}},
					},
				},
			}},
		},
		{
			// A scale-down rule set of its own leaves the window unset: the
			// controller flag supplies it.
			name: "scale up policies given",
			in: &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				MaxReplicas: 3, Metrics: memory,
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{
					Policies:  []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}},
					Tolerance: new(resource.MustParse("50m")),
				}},
			}},
			want: &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				MinReplicas: new(int32(1)), MaxReplicas: 3, Metrics: memory,
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
					ScaleUp: &autoscalingv2.HPAScalingRules{
						StabilizationWindowSeconds: new(int32(0)), SelectPolicy: maxPolicy,
						Policies:  []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}},
						Tolerance: new(resource.MustParse("50m")),
					},
					ScaleDown: &autoscalingv2.HPAScalingRules{
						SelectPolicy: maxPolicy,
						Policies:     []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}},
					},
				},
			}},
		},
	})
}
