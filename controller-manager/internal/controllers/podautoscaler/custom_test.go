package podautoscaler

import (
	"context"
	"errors"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// fakeCustom serves fixed custom and external metrics, in milli-units.
type fakeCustom struct {
	pods     map[string]PodMetric
	object   int64
	external []int64
	err      error
	// asked records the object a metric was asked of.
	asked *autoscalingv2.CrossVersionObjectReference
}

func (f *fakeCustom) PodsMetric(context.Context, string, string, labels.Selector, labels.Selector) (map[string]PodMetric, error) {
	out := map[string]PodMetric{}
	for k, v := range f.pods {
		out[k] = v
	}
	return out, f.err
}

func (f *fakeCustom) ObjectMetric(_ context.Context, _, _ string, o autoscalingv2.CrossVersionObjectReference, _ labels.Selector) (int64, error) {
	f.asked = &o
	return f.object, f.err
}

func (f *fakeCustom) ExternalMetric(context.Context, string, string, labels.Selector) ([]int64, error) {
	return f.external, f.err
}

func q(s string) *resource.Quantity { v := resource.MustParse(s); return &v }

func podsMetric(avg string) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "requests_per_second"},
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: q(avg)},
	}}
}

func objectMetric(target autoscalingv2.MetricTarget) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
		DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "main"},
		Metric:          autoscalingv2.MetricIdentifier{Name: "hits"},
		Target:          target,
	}}
}

func externalMetric(target autoscalingv2.MetricTarget) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "queue_messages", Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"queue": "jobs"}}},
		Target: target,
	}}
}

// TestCustomMetrics checks the arithmetic of upstream's replica
// calculator for Pods, Object and External metrics, current replicas 4.
func TestCustomMetrics(t *testing.T) {
	value := func(s string) autoscalingv2.MetricTarget {
		return autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: q(s)}
	}
	average := func(s string) autoscalingv2.MetricTarget {
		return autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: q(s)}
	}
	tests := []struct {
		name       string
		spec       autoscalingv2.MetricSpec
		source     *fakeCustom
		noSource   bool
		pods       []*corev1.Pod
		want       int32
		wantValue  string // the status's current value or average value
		wantName   string
		wantReason string
	}{
		{name: "pods: average 20 over target 10 doubles", spec: podsMetric("10"),
			source: &fakeCustom{pods: usage(20000, 20000, 20000, 20000)}, pods: pods(4),
			want: 8, wantValue: "20", wantName: "pods metric requests_per_second"},
		{name: "pods: within tolerance keeps", spec: podsMetric("10"),
			source: &fakeCustom{pods: usage(10500, 10500, 10500, 10500)}, pods: pods(4),
			want: 4, wantValue: "10500m"},
		{name: "pods: a pod without metric damps a scale-down", spec: podsMetric("10"),
			source: &fakeCustom{pods: usage(5000, 5000, 5000)}, pods: pods(4),
			want: 3, wantValue: "5"},
		{name: "pods: no metrics API", spec: podsMetric("10"), source: &fakeCustom{err: errors.New("no custom metrics API")},
			pods: pods(4), wantReason: "FailedGetPodsMetric"},
		{name: "pods: no source given", spec: podsMetric("10"), noSource: true, pods: pods(4), wantReason: "FailedGetPodsMetric"},
		{name: "object value: ratio times ready pods", spec: objectMetric(value("100")),
			source: &fakeCustom{object: 300000}, pods: pods(4, func(i int, p *corev1.Pod) {
				if i == 3 {
					p.Status.Conditions[0].Status = corev1.ConditionFalse
				}
			}),
			want: 9, wantValue: "300", wantName: "Ingress metric hits"},
		{name: "object value: within tolerance", spec: objectMetric(value("100")),
			source: &fakeCustom{object: 105000}, pods: pods(4), want: 4, wantValue: "105"},
		{name: "object average value: total over target", spec: objectMetric(average("50")),
			source: &fakeCustom{object: 500000}, pods: pods(4), want: 10, wantValue: "125"},
		{name: "object: no target", spec: objectMetric(autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType}),
			source: &fakeCustom{}, pods: pods(4), wantReason: "FailedGetObjectMetric"},
		{name: "external value: sum over target", spec: externalMetric(value("30")),
			source: &fakeCustom{external: []int64{40000, 20000}}, pods: pods(4),
			want: 8, wantValue: "60", wantName: "external metric queue_messages(&LabelSelector{MatchLabels:map[string]string{queue: jobs,},MatchExpressions:[]LabelSelectorRequirement{},})"},
		{name: "external average value: sum over per-pod target", spec: externalMetric(average("5")),
			source: &fakeCustom{external: []int64{7000, 6000}}, pods: pods(4), want: 3, wantValue: "3250m"},
		{name: "external: nothing returned", spec: externalMetric(value("30")),
			source: &fakeCustom{err: errors.New("no metrics returned from external metrics API")}, pods: pods(4), wantReason: "FailedGetExternalMetric"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Controller{calc: calculator{tolerance: 0.1, cpuInitialization: 5 * time.Minute, initialReadiness: 30 * time.Second, now: func() time.Time { return t0 }}}
			if !tt.noSource {
				c.opts.Custom = tt.source
			}
			got, st, name, reason, err := c.evaluateCustom(context.Background(), "ns", 4, tt.spec, labels.Everything(), tt.pods)
			if tt.wantReason != "" {
				if err == nil || reason != tt.wantReason {
					t.Fatalf("reason %q, err %v; want %s", reason, err, tt.wantReason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("proposal %d, want %d", got, tt.want)
			}
			if tt.wantName != "" && name != tt.wantName {
				t.Errorf("name %q, want %q", name, tt.wantName)
			}
			var cur autoscalingv2.MetricValueStatus
			switch {
			case st.Pods != nil:
				cur = st.Pods.Current
			case st.Object != nil:
				cur = st.Object.Current
				if tt.source.asked == nil || tt.source.asked.Name != "main" {
					t.Errorf("object metric asked of %+v", tt.source.asked)
				}
			case st.External != nil:
				cur = st.External.Current
			default:
				t.Fatalf("no status of the metric's type: %+v", st)
			}
			v := cur.Value
			if v == nil {
				v = cur.AverageValue
			}
			if v == nil || v.Cmp(resource.MustParse(tt.wantValue)) != 0 {
				t.Errorf("current %v, want %s", v, tt.wantValue)
			}
		})
	}
}
