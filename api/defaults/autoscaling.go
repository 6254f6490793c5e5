package defaults

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
)

// defaultCPUUtilization is the average CPU utilization, in percent of the
// request, an autoscaler without metrics aims for.
const defaultCPUUtilization = 80

// HorizontalPodAutoscaler sets a minimum of one replica, an 80% CPU target
// when no metric is given and, when a behavior is given, the scaling rules
// it leaves out.
func HorizontalPodAutoscaler(hpa *autoscalingv2.HorizontalPodAutoscaler) {
	spec := &hpa.Spec
	if spec.MinReplicas == nil {
		spec.MinReplicas = new(int32(1))
	}
	if len(spec.Metrics) == 0 {
		spec.Metrics = []autoscalingv2.MetricSpec{{
			Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{
					Type:               autoscalingv2.UtilizationMetricType,
					AverageUtilization: new(int32(defaultCPUUtilization)),
				},
			},
		}}
	}
	// A missing behavior stays missing: the controller then applies the same
	// rules, and its scale-down window comes from its own flag.
	if b := spec.Behavior; b != nil {
		b.ScaleUp = completeScalingRules(b.ScaleUp, scaleUpRules())
		b.ScaleDown = completeScalingRules(b.ScaleDown, scaleDownRules())
	}
}

// scaleUpRules are the historical scale-up limits: no stabilization, and
// per 15 seconds at most 4 pods or 100% more, whichever is larger.
func scaleUpRules() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: new(int32(0)),
		SelectPolicy:               new(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
}

// scaleDownRules allow removing every pod within 15 seconds. The
// stabilization window is left unset on purpose: the controller's
// --horizontal-pod-autoscaler-downscale-stabilization flag supplies it.
func scaleDownRules() *autoscalingv2.HPAScalingRules {
	return &autoscalingv2.HPAScalingRules{
		SelectPolicy: new(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
}

// completeScalingRules returns base overridden by each field set in given.
// A policies list counts as set even when empty.
func completeScalingRules(given, base *autoscalingv2.HPAScalingRules) *autoscalingv2.HPAScalingRules {
	if given == nil {
		return base
	}
	if given.SelectPolicy != nil {
		base.SelectPolicy = given.SelectPolicy
	}
	if given.StabilizationWindowSeconds != nil {
		base.StabilizationWindowSeconds = given.StabilizationWindowSeconds
	}
	if given.Policies != nil {
		base.Policies = given.Policies
	}
	if given.Tolerance != nil {
		base.Tolerance = given.Tolerance
	}
	return base
}
