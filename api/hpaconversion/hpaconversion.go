// Package hpaconversion converts HorizontalPodAutoscalers between
// autoscaling/v1, which still has clients, and autoscaling/v2, the form
// they are stored in. v1 has one field, targetCPUUtilizationPercentage,
// for what v2 says with a list of metrics; what v1 cannot say (other
// metrics, their current values, conditions, behavior) travels in the
// annotations upstream uses, so a v1 client that reads and writes an
// autoscaler back loses none of it.
package hpaconversion

import (
	"encoding/json"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// The annotations that carry in v1 what only v2 has fields for; upstream's
// names, so clients that read them keep working.
const (
	MetricsAnnotation        = "autoscaling.alpha.kubernetes.io/metrics"
	CurrentMetricsAnnotation = "autoscaling.alpha.kubernetes.io/current-metrics"
	ConditionsAnnotation     = "autoscaling.alpha.kubernetes.io/conditions"
	BehaviorAnnotation       = "autoscaling.alpha.kubernetes.io/behavior"
)

// defaultCPUUtilization is the target a v1 autoscaler without one aims for.
const defaultCPUUtilization = 80

// AddConversions registers the conversions between autoscaling/v1 and the
// hub (autoscaling/v2) types, and v1's defaulting.
func AddConversions(s *runtime.Scheme) error {
	funcs := []struct {
		a, b any
		fn   conversion.ConversionFunc
	}{
		{(*autoscalingv1.HorizontalPodAutoscaler)(nil), (*autoscalingv2.HorizontalPodAutoscaler)(nil), func(a, b any, _ conversion.Scope) error {
			return ToV2(a.(*autoscalingv1.HorizontalPodAutoscaler), b.(*autoscalingv2.HorizontalPodAutoscaler))
		}},
		{(*autoscalingv2.HorizontalPodAutoscaler)(nil), (*autoscalingv1.HorizontalPodAutoscaler)(nil), func(a, b any, _ conversion.Scope) error {
			return ToV1(a.(*autoscalingv2.HorizontalPodAutoscaler), b.(*autoscalingv1.HorizontalPodAutoscaler))
		}},
		{(*autoscalingv1.HorizontalPodAutoscalerList)(nil), (*autoscalingv2.HorizontalPodAutoscalerList)(nil), func(a, b any, _ conversion.Scope) error {
			in, out := a.(*autoscalingv1.HorizontalPodAutoscalerList), b.(*autoscalingv2.HorizontalPodAutoscalerList)
			out.ListMeta = *in.ListMeta.DeepCopy()
			var err error
			out.Items, err = convertItems(in.Items, ToV2)
			return err
		}},
		{(*autoscalingv2.HorizontalPodAutoscalerList)(nil), (*autoscalingv1.HorizontalPodAutoscalerList)(nil), func(a, b any, _ conversion.Scope) error {
			in, out := a.(*autoscalingv2.HorizontalPodAutoscalerList), b.(*autoscalingv1.HorizontalPodAutoscalerList)
			out.ListMeta = *in.ListMeta.DeepCopy()
			var err error
			out.Items, err = convertItems(in.Items, ToV1)
			return err
		}},
	}
	for _, f := range funcs {
		if err := s.AddConversionFunc(f.a, f.b, f.fn); err != nil {
			return fmt.Errorf("register autoscaling/v1 conversion: %w", err)
		}
	}
	s.AddTypeDefaultingFunc(&autoscalingv1.HorizontalPodAutoscaler{}, func(obj any) { setV1Defaults(obj.(*autoscalingv1.HorizontalPodAutoscaler)) })
	s.AddTypeDefaultingFunc(&autoscalingv1.HorizontalPodAutoscalerList{}, func(obj any) {
		for i := range obj.(*autoscalingv1.HorizontalPodAutoscalerList).Items {
			setV1Defaults(&obj.(*autoscalingv1.HorizontalPodAutoscalerList).Items[i])
		}
	})
	return nil
}

// convertItems converts a list's items one by one.
func convertItems[A, B any](in []A, convert func(*A, *B) error) ([]B, error) {
	out := make([]B, len(in))
	for i := range in {
		if err := convert(&in[i], &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// setV1Defaults is v1's one default: at least one replica.
func setV1Defaults(hpa *autoscalingv1.HorizontalPodAutoscaler) {
	if hpa.Spec.MinReplicas == nil {
		hpa.Spec.MinReplicas = new(int32(1))
	}
}

// ToV1 writes in as an autoscaling/v1 object to out.
func ToV1(in *autoscalingv2.HorizontalPodAutoscaler, out *autoscalingv1.HorizontalPodAutoscaler) error {
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Annotations = withoutRoundTrip(out.Annotations)
	out.Spec = autoscalingv1.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv1.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
		MinReplicas:    copyPtr(in.Spec.MinReplicas),
		MaxReplicas:    in.Spec.MaxReplicas,
	}
	var others []autoscalingv1.MetricSpec
	for _, m := range in.Spec.Metrics {
		if u := cpuUtilization(m); u != nil {
			if out.Spec.TargetCPUUtilizationPercentage == nil {
				out.Spec.TargetCPUUtilizationPercentage = copyPtr(u)
			}
			continue
		}
		others = append(others, metricToV1(m))
	}
	st := in.Status
	out.Status = autoscalingv1.HorizontalPodAutoscalerStatus{
		ObservedGeneration: copyPtr(st.ObservedGeneration),
		LastScaleTime:      st.LastScaleTime.DeepCopy(),
		CurrentReplicas:    st.CurrentReplicas,
		DesiredReplicas:    st.DesiredReplicas,
	}
	// Every current metric goes to the annotation, the CPU one too: it
	// carries the raw value beside the utilization.
	current := make([]autoscalingv1.MetricStatus, 0, len(st.CurrentMetrics))
	for _, m := range st.CurrentMetrics {
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU && m.Resource.Current.AverageUtilization != nil {
			out.Status.CurrentCPUUtilizationPercentage = copyPtr(m.Resource.Current.AverageUtilization)
		}
		current = append(current, metricStatusToV1(m))
	}
	conds := make([]autoscalingv1.HorizontalPodAutoscalerCondition, 0, len(st.Conditions))
	for _, c := range st.Conditions {
		conds = append(conds, autoscalingv1.HorizontalPodAutoscalerCondition{
			Type: autoscalingv1.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
		})
	}
	behavior := in.Spec.Behavior
	for _, a := range []struct {
		key   string
		value any
		set   bool
	}{
		{MetricsAnnotation, others, len(others) > 0},
		{CurrentMetricsAnnotation, current, len(current) > 0},
		{BehaviorAnnotation, behavior, behavior != nil},
		{ConditionsAnnotation, conds, len(conds) > 0},
	} {
		if !a.set {
			continue
		}
		b, err := json.Marshal(a.value)
		if err != nil {
			return fmt.Errorf("encode %s: %w", a.key, err)
		}
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[a.key] = string(b)
	}
	return nil
}

// ToV2 writes in, an autoscaling/v1 object, as the stored form to out.
// Annotations that do not decode are dropped, as upstream drops them.
func ToV2(in *autoscalingv1.HorizontalPodAutoscaler, out *autoscalingv2.HorizontalPodAutoscaler) error {
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	ann := in.Annotations
	out.Annotations = withoutRoundTrip(out.Annotations)
	out.Spec = autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference(in.Spec.ScaleTargetRef),
		MinReplicas:    copyPtr(in.Spec.MinReplicas),
		MaxReplicas:    in.Spec.MaxReplicas,
	}
	var others []autoscalingv1.MetricSpec
	decode(ann[MetricsAnnotation], &others)
	for _, m := range others {
		out.Spec.Metrics = append(out.Spec.Metrics, metricToV2(m))
	}
	target := in.Spec.TargetCPUUtilizationPercentage
	if target == nil && len(out.Spec.Metrics) == 0 {
		// v1's implicit target, made explicit as upstream does.
		target = new(int32(defaultCPUUtilization))
	}
	if target != nil {
		out.Spec.Metrics = append(out.Spec.Metrics, cpuMetric(*target))
	}
	var behavior autoscalingv2.HorizontalPodAutoscalerBehavior
	if decode(ann[BehaviorAnnotation], &behavior) && (behavior.ScaleUp != nil || behavior.ScaleDown != nil) {
		out.Spec.Behavior = &behavior
	}

	st := in.Status
	out.Status = autoscalingv2.HorizontalPodAutoscalerStatus{
		ObservedGeneration: copyPtr(st.ObservedGeneration),
		LastScaleTime:      st.LastScaleTime.DeepCopy(),
		CurrentReplicas:    st.CurrentReplicas,
		DesiredReplicas:    st.DesiredReplicas,
	}
	var current []autoscalingv1.MetricStatus
	if decode(ann[CurrentMetricsAnnotation], &current) {
		// The annotation has more than the percentage: it wins.
		for _, m := range current {
			out.Status.CurrentMetrics = append(out.Status.CurrentMetrics, metricStatusToV2(m))
		}
	} else if u := st.CurrentCPUUtilizationPercentage; u != nil {
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: copyPtr(u)}}}}
	}
	var conds []autoscalingv1.HorizontalPodAutoscalerCondition
	decode(ann[ConditionsAnnotation], &conds)
	for _, c := range conds {
		out.Status.Conditions = append(out.Status.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{
			Type: autoscalingv2.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status,
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message,
		})
	}
	return nil
}

// cpuUtilization is m's target when m is the one v1 has a field for.
func cpuUtilization(m autoscalingv2.MetricSpec) *int32 {
	if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU {
		return m.Resource.Target.AverageUtilization
	}
	return nil
}

func cpuMetric(utilization int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: new(utilization)}}}
}

// withoutRoundTrip removes the round-trip annotations from ann, a copy
// owned by the caller; it returns nil when nothing is left.
func withoutRoundTrip(ann map[string]string) map[string]string {
	for _, k := range []string{MetricsAnnotation, CurrentMetricsAnnotation, ConditionsAnnotation, BehaviorAnnotation} {
		delete(ann, k)
	}
	if len(ann) == 0 {
		return nil
	}
	return ann
}

// decode reads a JSON annotation into v; an absent or malformed one is
// ignored.
func decode(s string, v any) bool {
	return s != "" && json.Unmarshal([]byte(s), v) == nil
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func copyQuantity(q *resource.Quantity) *resource.Quantity {
	if q == nil {
		return nil
	}
	c := q.DeepCopy()
	return &c
}

// value is *q, or zero.
func value(q *resource.Quantity) resource.Quantity {
	if q == nil {
		return resource.Quantity{}
	}
	return q.DeepCopy()
}
