package podautoscaler

import (
	"context"
	"errors"
	"fmt"
	"math"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	custommetricsv1beta2 "k8s.io/metrics/pkg/apis/custom_metrics/v1beta2"
	"k8s.io/metrics/pkg/client/custom_metrics"
	"k8s.io/metrics/pkg/client/external_metrics"

	podstate "trireme.dev/controller-manager/internal/pods"
)

// CustomMetricsSource reads the custom and external metrics APIs
// (custom.metrics.k8s.io, external.metrics.k8s.io), served by an adapter
// such as prometheus-adapter or KEDA when one is installed.
type CustomMetricsSource interface {
	// PodsMetric returns, by pod name, metric name of the pods matching
	// selector, in milli-units.
	PodsMetric(ctx context.Context, namespace, name string, selector, metricSelector labels.Selector) (map[string]PodMetric, error)
	// ObjectMetric returns metric name of one object, in milli-units.
	ObjectMetric(ctx context.Context, namespace, name string, object autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (int64, error)
	// ExternalMetric returns every value of external metric name, in
	// milli-units.
	ExternalMetric(ctx context.Context, namespace, name string, metricSelector labels.Selector) ([]int64, error)
}

// CustomMetrics is a CustomMetricsSource on k8s.io/metrics' clients.
type CustomMetrics struct {
	Custom   custom_metrics.CustomMetricsClient
	External external_metrics.ExternalMetricsClient
}

// PodsMetric implements CustomMetricsSource.
func (m CustomMetrics) PodsMetric(_ context.Context, namespace, name string, selector, metricSelector labels.Selector) (map[string]PodMetric, error) {
	list, err := m.Custom.NamespacedMetrics(namespace).GetForObjects(schema.GroupKind{Kind: "Pod"}, selector, name, metricSelector)
	if err != nil {
		return nil, fmt.Errorf("unable to fetch metrics from custom metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, errors.New("no metrics returned from custom metrics API")
	}
	out := make(map[string]PodMetric, len(list.Items))
	for _, v := range list.Items {
		pm := PodMetric{Value: v.Value.MilliValue(), Timestamp: v.Timestamp.Time}
		out[v.DescribedObject.Name] = pm
	}
	return out, nil
}

// ObjectMetric implements CustomMetricsSource. A Namespace's metric is
// always the autoscaler's own namespace's, as upstream: the reference may
// not reach out of it.
func (m CustomMetrics) ObjectMetric(_ context.Context, namespace, name string, object autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (int64, error) {
	gk := schema.FromAPIVersionAndKind(object.APIVersion, object.Kind).GroupKind()
	var mv *custommetricsv1beta2.MetricValue
	var err error
	if gk.Kind == "Namespace" && gk.Group == "" {
		mv, err = m.Custom.RootScopedMetrics().GetForObject(gk, namespace, name, metricSelector)
	} else {
		mv, err = m.Custom.NamespacedMetrics(namespace).GetForObject(gk, object.Name, name, metricSelector)
	}
	if err != nil {
		return 0, fmt.Errorf("unable to fetch metrics from custom metrics API: %w", err)
	}
	return mv.Value.MilliValue(), nil
}

// ExternalMetric implements CustomMetricsSource.
func (m CustomMetrics) ExternalMetric(_ context.Context, namespace, name string, metricSelector labels.Selector) ([]int64, error) {
	list, err := m.External.NamespacedMetrics(namespace).List(name, metricSelector)
	if err != nil {
		return nil, fmt.Errorf("unable to fetch metrics from external metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, errors.New("no metrics returned from external metrics API")
	}
	out := make([]int64, 0, len(list.Items))
	for _, v := range list.Items {
		out = append(out, v.Value.MilliValue())
	}
	return out, nil
}

// evaluateCustom proposes replicas from a Pods, Object or External metric
// as upstream's replica calculator does. It returns the proposal, the
// metric's status, its name for conditions, and on failure upstream's
// condition reason.
func (c *Controller) evaluateCustom(ctx context.Context, namespace string, current int32, spec autoscalingv2.MetricSpec, selector labels.Selector, podList []*corev1.Pod) (int32, autoscalingv2.MetricStatus, string, string, error) {
	in := metricInput{namespace: namespace, current: current, selector: selector, pods: podList}
	var (
		r      metricResult
		err    error
		failed string
	)
	switch spec.Type {
	case autoscalingv2.PodsMetricSourceType:
		failed = "FailedGetPodsMetric"
		r, err = c.podsMetric(ctx, in, spec.Pods)
	case autoscalingv2.ObjectMetricSourceType:
		failed = "FailedGetObjectMetric"
		r, err = c.objectMetric(ctx, in, spec.Object)
	case autoscalingv2.ExternalMetricSourceType:
		failed = "FailedGetExternalMetric"
		r, err = c.externalMetric(ctx, in, spec.External)
	default:
		return 0, autoscalingv2.MetricStatus{}, "", "InvalidMetricSourceType", fmt.Errorf("unknown metric source type %q", spec.Type)
	}
	if err != nil {
		return 0, autoscalingv2.MetricStatus{}, "", failed, err
	}
	r.status.Type = spec.Type
	return r.proposal, r.status, r.name, "", nil
}

// metricInput is what every metric's evaluation starts from: the scale
// target's namespace, replicas, pod selector and pods.
type metricInput struct {
	namespace string
	current   int32
	selector  labels.Selector
	pods      []*corev1.Pod
}

// metricResult is a metric's proposal, its status (its type set by the
// caller) and its name for conditions.
type metricResult struct {
	proposal int32
	status   autoscalingv2.MetricStatus
	name     string
}

// podsMetric proposes replicas from a Pods metric: the resource arithmetic
// with an average target and no resource, so no CPU start-up rules.
func (c *Controller) podsMetric(ctx context.Context, in metricInput, src *autoscalingv2.PodsMetricSource) (metricResult, error) {
	if src == nil {
		return metricResult{}, errors.New("metric of type Pods has no pods")
	}
	if c.opts.Custom == nil {
		return metricResult{}, errors.New("pods metrics need the custom metrics API, which this controller was not given")
	}
	metricSel, err := metav1.LabelSelectorAsSelector(src.Metric.Selector)
	if err != nil {
		return metricResult{}, fmt.Errorf("failed to get pods metric value: %w", err)
	}
	if src.Target.AverageValue == nil {
		return metricResult{}, errors.New("invalid pods metric source: the target has no averageValue")
	}
	metrics, err := c.opts.Custom.PodsMetric(ctx, in.namespace, src.Metric.Name, in.selector, metricSel)
	if err != nil {
		return metricResult{}, fmt.Errorf("failed to get pods metric value: unable to get metric %s: %w", src.Metric.Name, err)
	}
	proposal, _, avg, err := c.calc.resourceReplicas(in.current, nil, src.Target.AverageValue.MilliValue(), "", "", metrics, in.pods)
	if err != nil {
		return metricResult{}, fmt.Errorf("failed to get pods metric value: %w", err)
	}
	return metricResult{proposal: proposal, name: "pods metric " + src.Metric.Name, status: autoscalingv2.MetricStatus{Pods: &autoscalingv2.PodsMetricStatus{
		Metric:  src.Metric,
		Current: autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(avg, resource.DecimalSI)},
	}}}, nil
}

// objectMetric proposes replicas from an Object metric, against a value
// target or an average one.
func (c *Controller) objectMetric(ctx context.Context, in metricInput, src *autoscalingv2.ObjectMetricSource) (metricResult, error) {
	if src == nil {
		return metricResult{}, errors.New("metric of type Object has no object")
	}
	if c.opts.Custom == nil {
		return metricResult{}, errors.New("object metrics need the custom metrics API, which this controller was not given")
	}
	metricSel, err := metav1.LabelSelectorAsSelector(src.Metric.Selector)
	if err != nil {
		return metricResult{}, fmt.Errorf("failed to get object metric value: %w", err)
	}
	t := src.Target
	if t.Value == nil && t.AverageValue == nil {
		return metricResult{}, errors.New("invalid object metric source: neither a value target nor an average value target was set")
	}
	usage, err := c.opts.Custom.ObjectMetric(ctx, in.namespace, src.Metric.Name, src.DescribedObject, metricSel)
	if err != nil {
		return metricResult{}, fmt.Errorf("failed to get object metric value: unable to get metric %s: %w", src.Metric.Name, err)
	}
	st := &autoscalingv2.ObjectMetricStatus{Metric: src.Metric, DescribedObject: src.DescribedObject}
	var proposal int32
	if t.Value != nil {
		proposal, err = c.calc.ratioReplicas(in.current, float64(usage)/float64(t.Value.MilliValue()), in.pods)
		st.Current.Value = resource.NewMilliQuantity(usage, resource.DecimalSI)
	} else {
		var avg int64
		proposal, avg = c.calc.perPodReplicas(in.current, usage, t.AverageValue.MilliValue())
		st.Current.AverageValue = resource.NewMilliQuantity(avg, resource.DecimalSI)
	}
	if err != nil {
		return metricResult{}, fmt.Errorf("failed to get object metric value: %w", err)
	}
	return metricResult{proposal: proposal, name: fmt.Sprintf("%s metric %s", src.DescribedObject.Kind, src.Metric.Name),
		status: autoscalingv2.MetricStatus{Object: st}}, nil
}

// externalMetric proposes replicas from an External metric, the sum of
// its series, against an average target or a value one.
func (c *Controller) externalMetric(ctx context.Context, in metricInput, src *autoscalingv2.ExternalMetricSource) (metricResult, error) {
	if src == nil {
		return metricResult{}, errors.New("metric of type External has no external")
	}
	if c.opts.Custom == nil {
		return metricResult{}, errors.New("external metrics need the external metrics API, which this controller was not given")
	}
	metricSel, err := metav1.LabelSelectorAsSelector(src.Metric.Selector)
	if err != nil {
		return metricResult{}, fmt.Errorf("failed to get external metric value: %w", err)
	}
	t := src.Target
	if t.Value == nil && t.AverageValue == nil {
		return metricResult{}, errors.New("invalid external metric source: neither a value target nor an average value target was set")
	}
	values, err := c.opts.Custom.ExternalMetric(ctx, in.namespace, src.Metric.Name, metricSel)
	if err != nil {
		return metricResult{}, fmt.Errorf("failed to get external metric value: unable to get external metric %s/%s/%+v: %w", in.namespace, src.Metric.Name, src.Metric.Selector, err)
	}
	var usage int64
	for _, v := range values {
		usage += v
	}
	st := &autoscalingv2.ExternalMetricStatus{Metric: src.Metric}
	var proposal int32
	if t.AverageValue != nil {
		var avg int64
		proposal, avg = c.calc.perPodReplicas(in.current, usage, t.AverageValue.MilliValue())
		st.Current.AverageValue = resource.NewMilliQuantity(avg, resource.DecimalSI)
	} else {
		proposal, err = c.calc.ratioReplicas(in.current, float64(usage)/float64(t.Value.MilliValue()), in.pods)
		st.Current.Value = resource.NewMilliQuantity(usage, resource.DecimalSI)
	}
	if err != nil {
		return metricResult{}, fmt.Errorf("failed to get external metric value: %w", err)
	}
	return metricResult{proposal: proposal, name: fmt.Sprintf("external metric %s(%+v)", src.Metric.Name, src.Metric.Selector),
		status: autoscalingv2.MetricStatus{External: st}}, nil
}

// ratioReplicas scales the ready pods by a usage ratio (a value target):
// no change within the tolerance; from zero replicas, the ratio itself.
func (c calculator) ratioReplicas(current int32, ratio float64, podList []*corev1.Pod) (int32, error) {
	if current == 0 {
		return int32(math.Ceil(ratio)), nil
	}
	if math.Abs(1.0-ratio) <= c.tolerance {
		return current, nil
	}
	if len(podList) == 0 {
		return 0, errors.New("no pods returned by selector while calculating replica count")
	}
	var ready int
	for _, p := range podList {
		if p.Status.Phase == corev1.PodRunning && podstate.Ready(p) {
			ready++
		}
	}
	return int32(math.Ceil(ratio * float64(ready))), nil
}

// perPodReplicas proposes replicas for a total usage shared between
// pods (an averageValue target of an Object or External metric): the
// total over the target, unless within the tolerance of current. It also
// returns the current usage a pod.
func (c calculator) perPodReplicas(current int32, usage, targetPerPod int64) (int32, int64) {
	proposal := current
	if ratio := float64(usage) / (float64(targetPerPod) * float64(current)); math.Abs(1.0-ratio) > c.tolerance {
		proposal = int32(math.Ceil(float64(usage) / float64(targetPerPod)))
	}
	return proposal, int64(math.Ceil(float64(usage) / float64(current)))
}
