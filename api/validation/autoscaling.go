package validation

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*autoscalingv2.HorizontalPodAutoscaler]{
		name: pathSegmentName,
		spec: hpaRules,
		statusChange: func(h, old *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
			p := field.NewPath("status")
			errs := nonNegative(int64(h.Status.CurrentReplicas), p.Child("currentReplicas"))
			return append(errs, nonNegative(int64(h.Status.DesiredReplicas), p.Child("desiredReplicas"))...)
		},
	})
}

// Bounds on scaling behavior, as upstream sets them.
const (
	maxStabilizationWindowSeconds = 3600
	maxScalingPolicyPeriodSeconds = 1800
)

var metricSourceTypes = []autoscalingv2.MetricSourceType{
	autoscalingv2.ObjectMetricSourceType, autoscalingv2.PodsMetricSourceType, autoscalingv2.ResourceMetricSourceType,
	autoscalingv2.ContainerResourceMetricSourceType, autoscalingv2.ExternalMetricSourceType,
}
var metricTargetTypes = []autoscalingv2.MetricTargetType{autoscalingv2.UtilizationMetricType, autoscalingv2.ValueMetricType, autoscalingv2.AverageValueMetricType}
var scalingPolicySelects = []autoscalingv2.ScalingPolicySelect{autoscalingv2.MaxChangePolicySelect, autoscalingv2.MinChangePolicySelect, autoscalingv2.DisabledPolicySelect}
var scalingPolicyTypes = []autoscalingv2.HPAScalingPolicyType{autoscalingv2.PodsScalingPolicy, autoscalingv2.PercentScalingPolicy}

func hpaRules(h *autoscalingv2.HorizontalPodAutoscaler) field.ErrorList {
	var errs field.ErrorList
	spec := &h.Spec
	if spec.MinReplicas != nil && *spec.MinReplicas < 1 {
		errs = append(errs, field.Invalid(specPath.Child("minReplicas"), *spec.MinReplicas, "must be greater than or equal to 1"))
	}
	if spec.MaxReplicas < 1 {
		errs = append(errs, field.Invalid(specPath.Child("maxReplicas"), spec.MaxReplicas, "must be greater than 0"))
	}
	if spec.MinReplicas != nil && spec.MaxReplicas < *spec.MinReplicas {
		errs = append(errs, field.Invalid(specPath.Child("maxReplicas"), spec.MaxReplicas, "must be greater than or equal to `minReplicas`"))
	}
	errs = append(errs, crossVersionRef(spec.ScaleTargetRef, specPath.Child("scaleTargetRef"))...)
	for i := range spec.Metrics {
		errs = append(errs, metricSpec(&spec.Metrics[i], specPath.Child("metrics").Index(i))...)
	}
	if b := spec.Behavior; b != nil {
		errs = append(errs, scalingRules(b.ScaleUp, specPath.Child("behavior", "scaleUp"))...)
		errs = append(errs, scalingRules(b.ScaleDown, specPath.Child("behavior", "scaleDown"))...)
	}
	return errs
}

func crossVersionRef(ref autoscalingv2.CrossVersionObjectReference, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if ref.Kind == "" {
		errs = append(errs, field.Required(fldPath.Child("kind"), ""))
	} else {
		errs = append(errs, each(fldPath.Child("kind"), ref.Kind, content.IsPathSegmentName(ref.Kind))...)
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), ""))
	} else {
		errs = append(errs, each(fldPath.Child("name"), ref.Name, content.IsPathSegmentName(ref.Name))...)
	}
	return errs
}

// metricSpec requires the source named by type, and only that one.
func metricSpec(m *autoscalingv2.MetricSpec, fldPath *field.Path) field.ErrorList {
	errs := enum(m.Type, fldPath.Child("type"), metricSourceTypes...)
	sources := []struct {
		typ  autoscalingv2.MetricSourceType
		name string
		set  bool
	}{
		{autoscalingv2.ObjectMetricSourceType, "object", m.Object != nil},
		{autoscalingv2.PodsMetricSourceType, "pods", m.Pods != nil},
		{autoscalingv2.ResourceMetricSourceType, "resource", m.Resource != nil},
		{autoscalingv2.ContainerResourceMetricSourceType, "containerResource", m.ContainerResource != nil},
		{autoscalingv2.ExternalMetricSourceType, "external", m.External != nil},
	}
	for _, s := range sources {
		switch {
		case s.typ == m.Type && !s.set:
			errs = append(errs, field.Required(fldPath.Child(s.name), "must populate information for the given metric source"))
		case s.typ != m.Type && s.set:
			errs = append(errs, field.Forbidden(fldPath.Child(s.name), "must populate the given metric source only"))
		}
	}
	switch {
	case m.Object != nil && m.Type == autoscalingv2.ObjectMetricSourceType:
		p := fldPath.Child("object")
		errs = append(errs, crossVersionRef(m.Object.DescribedObject, p.Child("describedObject"))...)
		errs = append(errs, metricIdentifier(m.Object.Metric, p.Child("metric"))...)
		errs = append(errs, metricTarget(m.Object.Target, p.Child("target"))...)
		if m.Object.Target.Value == nil && m.Object.Target.AverageValue == nil {
			errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value or averageValue"))
		}
	case m.Pods != nil && m.Type == autoscalingv2.PodsMetricSourceType:
		p := fldPath.Child("pods")
		errs = append(errs, metricIdentifier(m.Pods.Metric, p.Child("metric"))...)
		errs = append(errs, metricTarget(m.Pods.Target, p.Child("target"))...)
		if m.Pods.Target.AverageValue == nil {
			errs = append(errs, field.Required(p.Child("target", "averageValue"), "must specify a positive target averageValue"))
		}
	case m.Resource != nil && m.Type == autoscalingv2.ResourceMetricSourceType:
		p := fldPath.Child("resource")
		errs = append(errs, resourceMetric(string(m.Resource.Name), m.Resource.Target, p)...)
	case m.ContainerResource != nil && m.Type == autoscalingv2.ContainerResourceMetricSourceType:
		p := fldPath.Child("containerResource")
		errs = append(errs, resourceMetric(string(m.ContainerResource.Name), m.ContainerResource.Target, p)...)
		if m.ContainerResource.Container == "" {
			errs = append(errs, field.Required(p.Child("container"), "must populate container name"))
		} else {
			errs = append(errs, dns1123Label(m.ContainerResource.Container, p.Child("container"))...)
		}
	case m.External != nil && m.Type == autoscalingv2.ExternalMetricSourceType:
		p := fldPath.Child("external")
		errs = append(errs, metricIdentifier(m.External.Metric, p.Child("metric"))...)
		errs = append(errs, metricTarget(m.External.Target, p.Child("target"))...)
		if m.External.Target.Value == nil && m.External.Target.AverageValue == nil {
			errs = append(errs, field.Required(p.Child("target", "averageValue"), "must set either a target value for metric or a per-pod target"))
		}
	}
	return errs
}

func resourceMetric(name string, t autoscalingv2.MetricTarget, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), "must specify a resource name"))
	} else {
		errs = append(errs, qualifiedName(name, fldPath.Child("name"))...)
	}
	errs = append(errs, metricTarget(t, fldPath.Child("target"))...)
	if t.AverageUtilization == nil && t.AverageValue == nil {
		errs = append(errs, field.Required(fldPath.Child("target", "averageUtilization"), "must set either a target raw value or a target utilization"))
	}
	if t.AverageUtilization != nil && t.AverageValue != nil {
		errs = append(errs, field.Forbidden(fldPath.Child("target", "averageValue"), "may not set both a target raw value and a target utilization"))
	}
	return errs
}

func metricIdentifier(id autoscalingv2.MetricIdentifier, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if id.Name == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), "must specify a metric name"))
	} else {
		errs = append(errs, each(fldPath.Child("name"), id.Name, content.IsPathSegmentName(id.Name))...)
	}
	errs = append(errs, labelSelector(id.Selector, fldPath.Child("selector"))...)
	return errs
}

func metricTarget(t autoscalingv2.MetricTarget, fldPath *field.Path) field.ErrorList {
	errs := enum(t.Type, fldPath.Child("type"), metricTargetTypes...)
	if t.Value != nil && t.Value.Sign() <= 0 {
		errs = append(errs, field.Invalid(fldPath.Child("value"), t.Value.String(), "must be positive"))
	}
	if t.AverageValue != nil && t.AverageValue.Sign() <= 0 {
		errs = append(errs, field.Invalid(fldPath.Child("averageValue"), t.AverageValue.String(), "must be positive"))
	}
	if t.AverageUtilization != nil && *t.AverageUtilization < 1 {
		errs = append(errs, field.Invalid(fldPath.Child("averageUtilization"), *t.AverageUtilization, "must be greater than 0"))
	}
	return errs
}

func scalingRules(r *autoscalingv2.HPAScalingRules, fldPath *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if w := r.StabilizationWindowSeconds; w != nil {
		errs = append(errs, nonNegative(int64(*w), fldPath.Child("stabilizationWindowSeconds"))...)
		if *w > maxStabilizationWindowSeconds {
			errs = append(errs, field.Invalid(fldPath.Child("stabilizationWindowSeconds"), *w, "must be less than or equal to 3600"))
		}
	}
	if r.SelectPolicy != nil {
		errs = append(errs, enum(*r.SelectPolicy, fldPath.Child("selectPolicy"), scalingPolicySelects...)...)
	}
	if r.Tolerance != nil {
		errs = append(errs, nonNegativeQuantity(*r.Tolerance, fldPath.Child("tolerance"))...)
	}
	pp := fldPath.Child("policies")
	if len(r.Policies) == 0 {
		errs = append(errs, field.Required(pp, "must specify at least one Policy"))
	}
	for i, p := range r.Policies {
		ip := pp.Index(i)
		errs = append(errs, enum(p.Type, ip.Child("type"), scalingPolicyTypes...)...)
		errs = append(errs, positive(int64(p.Value), ip.Child("value"))...)
		errs = append(errs, positive(int64(p.PeriodSeconds), ip.Child("periodSeconds"))...)
		if p.PeriodSeconds > maxScalingPolicyPeriodSeconds {
			errs = append(errs, field.Invalid(ip.Child("periodSeconds"), p.PeriodSeconds, "must be less than or equal to 1800"))
		}
	}
	return errs
}
