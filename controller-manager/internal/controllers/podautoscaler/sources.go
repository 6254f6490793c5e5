package podautoscaler

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/scale"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
)

// Scaler reads and writes the scale subresource of a target.
type Scaler interface {
	Get(ctx context.Context, namespace string, ref autoscalingv2.CrossVersionObjectReference) (*autoscalingv1.Scale, schema.GroupResource, error)
	Update(ctx context.Context, namespace string, gr schema.GroupResource, s *autoscalingv1.Scale) error
}

// MetricsSource reads pods' resource usage.
type MetricsSource interface {
	// PodMetrics returns, by pod name, the usage of resource by the pods
	// matching selector (only container's usage, when it is set).
	PodMetrics(ctx context.Context, namespace string, selector labels.Selector, resource corev1.ResourceName, container string) (map[string]PodMetric, error)
}

// ScaleClient is a Scaler on client-go's scale client, resolving the
// target's kind through mapper.
type ScaleClient struct {
	Scales scale.ScalesGetter
	Mapper meta.RESTMapper
}

// Get finds the target's resource and reads its scale.
func (s ScaleClient) Get(ctx context.Context, namespace string, ref autoscalingv2.CrossVersionObjectReference) (*autoscalingv1.Scale, schema.GroupResource, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, schema.GroupResource{}, fmt.Errorf("invalid API version %q in scale target: %w", ref.APIVersion, err)
	}
	mappings, err := s.Mapper.RESTMappings(schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, gv.Version)
	if err != nil {
		if meta.IsNoMatchError(err) {
			if rm, ok := s.Mapper.(interface{ Reset() }); ok {
				rm.Reset()
			}
		}
		return nil, schema.GroupResource{}, fmt.Errorf("unable to determine resource for scale target reference: %w", err)
	}
	var last error
	for _, m := range mappings {
		gr := m.Resource.GroupResource()
		sc, err := s.Scales.Scales(namespace).Get(ctx, gr, ref.Name, metav1.GetOptions{})
		if err == nil {
			return sc, gr, nil
		}
		last = err
	}
	return nil, schema.GroupResource{}, last
}

// Update writes the scale.
func (s ScaleClient) Update(ctx context.Context, namespace string, gr schema.GroupResource, sc *autoscalingv1.Scale) error {
	_, err := s.Scales.Scales(namespace).Update(ctx, gr, sc, metav1.UpdateOptions{})
	return err
}

// ResourceMetrics is a MetricsSource on the metrics.k8s.io API (served
// by metrics-server, when installed).
type ResourceMetrics struct {
	Client metricsclient.Interface
}

// PodMetrics lists PodMetrics and sums each pod's containers' usage.
func (r ResourceMetrics) PodMetrics(ctx context.Context, namespace string, selector labels.Selector, resource corev1.ResourceName, container string) (map[string]PodMetric, error) {
	list, err := r.Client.MetricsV1beta1().PodMetricses(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, fmt.Errorf("unable to fetch metrics from resource metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("no metrics returned from resource metrics API")
	}
	out := map[string]PodMetric{}
	for _, m := range list.Items {
		var sum int64
		found := false
		for _, c := range m.Containers {
			if container != "" && c.Name != container {
				continue
			}
			q, ok := c.Usage[resource]
			if !ok {
				found = false
				break
			}
			sum += q.MilliValue()
			found = true
		}
		// A pod missing the resource for some container is missing
		// altogether, as upstream: a partial sum would read low.
		if found {
			out[m.Name] = PodMetric{Value: sum, Timestamp: m.Timestamp.Time, Window: m.Window.Duration}
		}
	}
	return out, nil
}
