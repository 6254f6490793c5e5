package hpaconversion

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The v1 metric shapes (kept in annotations) flatten v2's MetricTarget and
// MetricValueStatus into per-source fields; these functions move between
// the two. A source type v1 cannot describe is kept by its type alone.

func metricToV1(m autoscalingv2.MetricSpec) autoscalingv1.MetricSpec {
	out := autoscalingv1.MetricSpec{Type: autoscalingv1.MetricSourceType(m.Type)}
	switch {
	case m.Object != nil:
		o := m.Object
		out.Object = &autoscalingv1.ObjectMetricSource{
			Target:     autoscalingv1.CrossVersionObjectReference(o.DescribedObject),
			MetricName: o.Metric.Name, Selector: o.Metric.Selector.DeepCopy(),
			TargetValue: value(o.Target.Value), AverageValue: copyQuantity(o.Target.AverageValue),
		}
	case m.Pods != nil:
		p := m.Pods
		out.Pods = &autoscalingv1.PodsMetricSource{MetricName: p.Metric.Name, Selector: p.Metric.Selector.DeepCopy(), TargetAverageValue: value(p.Target.AverageValue)}
	case m.Resource != nil:
		r := m.Resource
		out.Resource = &autoscalingv1.ResourceMetricSource{Name: r.Name, TargetAverageUtilization: copyPtr(r.Target.AverageUtilization), TargetAverageValue: copyQuantity(r.Target.AverageValue)}
	case m.ContainerResource != nil:
		r := m.ContainerResource
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricSource{Name: r.Name, Container: r.Container,
			TargetAverageUtilization: copyPtr(r.Target.AverageUtilization), TargetAverageValue: copyQuantity(r.Target.AverageValue)}
	case m.External != nil:
		e := m.External
		out.External = &autoscalingv1.ExternalMetricSource{MetricName: e.Metric.Name, MetricSelector: e.Metric.Selector.DeepCopy(),
			TargetValue: copyQuantity(e.Target.Value), TargetAverageValue: copyQuantity(e.Target.AverageValue)}
	}
	return out
}

func metricToV2(m autoscalingv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(m.Type)}
	switch {
	case m.Object != nil:
		o := m.Object
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: copyQuantity(&o.TargetValue)}
		if o.AverageValue != nil {
			t = autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: copyQuantity(o.AverageValue)}
		}
		out.Object = &autoscalingv2.ObjectMetricSource{DescribedObject: autoscalingv2.CrossVersionObjectReference(o.Target),
			Metric: autoscalingv2.MetricIdentifier{Name: o.MetricName, Selector: o.Selector.DeepCopy()}, Target: t}
	case m.Pods != nil:
		p := m.Pods
		out.Pods = &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: p.MetricName, Selector: p.Selector.DeepCopy()},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: copyQuantity(&p.TargetAverageValue)}}
	case m.Resource != nil:
		r := m.Resource
		out.Resource = &autoscalingv2.ResourceMetricSource{Name: r.Name, Target: resourceTarget(r.TargetAverageUtilization, r.TargetAverageValue)}
	case m.ContainerResource != nil:
		r := m.ContainerResource
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{Name: r.Name, Container: r.Container,
			Target: resourceTarget(r.TargetAverageUtilization, r.TargetAverageValue)}
	case m.External != nil:
		e := m.External
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: copyQuantity(e.TargetValue)}
		if e.TargetAverageValue != nil {
			t = autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: copyQuantity(e.TargetAverageValue)}
		}
		out.External = &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: e.MetricName, Selector: e.MetricSelector.DeepCopy()}, Target: t}
	}
	return out
}

// resourceTarget is a utilization target when one is given, else an
// average value.
func resourceTarget(utilization *int32, average *resource.Quantity) autoscalingv2.MetricTarget {
	if utilization != nil {
		return autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: copyPtr(utilization)}
	}
	return autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: copyQuantity(average)}
}

func metricStatusToV1(m autoscalingv2.MetricStatus) autoscalingv1.MetricStatus {
	out := autoscalingv1.MetricStatus{Type: autoscalingv1.MetricSourceType(m.Type)}
	switch {
	case m.Object != nil:
		o := m.Object
		out.Object = &autoscalingv1.ObjectMetricStatus{Target: autoscalingv1.CrossVersionObjectReference(o.DescribedObject),
			MetricName: o.Metric.Name, Selector: o.Metric.Selector.DeepCopy(),
			CurrentValue: value(o.Current.Value), AverageValue: copyQuantity(o.Current.AverageValue)}
	case m.Pods != nil:
		p := m.Pods
		out.Pods = &autoscalingv1.PodsMetricStatus{MetricName: p.Metric.Name, Selector: p.Metric.Selector.DeepCopy(), CurrentAverageValue: value(p.Current.AverageValue)}
	case m.Resource != nil:
		r := m.Resource
		out.Resource = &autoscalingv1.ResourceMetricStatus{Name: r.Name, CurrentAverageUtilization: copyPtr(r.Current.AverageUtilization), CurrentAverageValue: value(r.Current.AverageValue)}
	case m.ContainerResource != nil:
		r := m.ContainerResource
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricStatus{Name: r.Name, Container: r.Container,
			CurrentAverageUtilization: copyPtr(r.Current.AverageUtilization), CurrentAverageValue: value(r.Current.AverageValue)}
	case m.External != nil:
		e := m.External
		out.External = &autoscalingv1.ExternalMetricStatus{MetricName: e.Metric.Name, MetricSelector: e.Metric.Selector.DeepCopy(),
			CurrentValue: value(e.Current.Value), CurrentAverageValue: copyQuantity(e.Current.AverageValue)}
	}
	return out
}

func metricStatusToV2(m autoscalingv1.MetricStatus) autoscalingv2.MetricStatus {
	out := autoscalingv2.MetricStatus{Type: autoscalingv2.MetricSourceType(m.Type)}
	switch {
	case m.Object != nil:
		o := m.Object
		out.Object = &autoscalingv2.ObjectMetricStatus{DescribedObject: autoscalingv2.CrossVersionObjectReference(o.Target),
			Metric:  autoscalingv2.MetricIdentifier{Name: o.MetricName, Selector: o.Selector.DeepCopy()},
			Current: autoscalingv2.MetricValueStatus{Value: copyQuantity(&o.CurrentValue), AverageValue: copyQuantity(o.AverageValue)}}
	case m.Pods != nil:
		p := m.Pods
		out.Pods = &autoscalingv2.PodsMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: p.MetricName, Selector: p.Selector.DeepCopy()},
			Current: autoscalingv2.MetricValueStatus{AverageValue: copyQuantity(&p.CurrentAverageValue)}}
	case m.Resource != nil:
		r := m.Resource
		out.Resource = &autoscalingv2.ResourceMetricStatus{Name: r.Name,
			Current: autoscalingv2.MetricValueStatus{AverageUtilization: copyPtr(r.CurrentAverageUtilization), AverageValue: copyQuantity(&r.CurrentAverageValue)}}
	case m.ContainerResource != nil:
		r := m.ContainerResource
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{Name: r.Name, Container: r.Container,
			Current: autoscalingv2.MetricValueStatus{AverageUtilization: copyPtr(r.CurrentAverageUtilization), AverageValue: copyQuantity(&r.CurrentAverageValue)}}
	case m.External != nil:
		e := m.External
		out.External = &autoscalingv2.ExternalMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: e.MetricName, Selector: e.MetricSelector.DeepCopy()},
			Current: autoscalingv2.MetricValueStatus{Value: copyQuantity(&e.CurrentValue), AverageValue: copyQuantity(e.CurrentAverageValue)}}
	}
	return out
}
