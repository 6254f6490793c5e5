package podautoscaler

import (
	"context"
	"errors"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

// fakeScaler is a target with a scale subresource.
type fakeScaler struct {
	replicas int32
	selector string
	getErr   error
	updated  []int32
}

func (f *fakeScaler) Get(context.Context, string, autoscalingv2.CrossVersionObjectReference) (*autoscalingv1.Scale, schema.GroupResource, error) {
	if f.getErr != nil {
		return nil, schema.GroupResource{}, f.getErr
	}
	return &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: f.replicas}, Status: autoscalingv1.ScaleStatus{Replicas: f.replicas, Selector: f.selector}},
		schema.GroupResource{Group: "apps", Resource: "deployments"}, nil
}

func (f *fakeScaler) Update(_ context.Context, _ string, _ schema.GroupResource, s *autoscalingv1.Scale) error {
	f.replicas = s.Spec.Replicas
	f.updated = append(f.updated, s.Spec.Replicas)
	return nil
}

// fakeMetrics serves fixed usage, or an error.
type fakeMetrics struct {
	usage map[string]PodMetric
	err   error
}

func (f fakeMetrics) PodMetrics(context.Context, string, labels.Selector, corev1.ResourceName, string) (map[string]PodMetric, error) {
	out := map[string]PodMetric{}
	for k, v := range f.usage {
		out[k] = v
	}
	return out, f.err
}

func autoscaler(minReplicas int32, metrics ...autoscalingv2.MetricSpec) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To(minReplicas), MaxReplicas: 10, Metrics: metrics,
		},
	}
}

var cpu50 = autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
	Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)},
}}

func TestReconcile(t *testing.T) {
	labelled := func(i int, p *corev1.Pod) { p.Namespace = "ns"; p.Labels = map[string]string{"app": "web"} }
	tests := []struct {
		name       string
		hpa        *autoscalingv2.HorizontalPodAutoscaler
		scaler     *fakeScaler
		metrics    fakeMetrics
		wantScale  []int32
		wantConds  map[autoscalingv2.HorizontalPodAutoscalerConditionType]string
		wantEvents int
	}{
		{"scales up on high cpu", autoscaler(1, cpu50), &fakeScaler{replicas: 2, selector: "app=web"}, fakeMetrics{usage: usage(100, 100)}, []int32{4},
			map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{autoscalingv2.AbleToScale: "SucceededRescale", autoscalingv2.ScalingActive: "ValidMetricFound", autoscalingv2.ScalingLimited: withinRange}, 1},
		{"scale down waits for the stabilization window", autoscaler(1, cpu50), &fakeScaler{replicas: 4, selector: "app=web"}, fakeMetrics{usage: usage(10, 10)}, nil,
			map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{autoscalingv2.AbleToScale: "ScaleDownStabilized", autoscalingv2.ScalingActive: "ValidMetricFound"}, 0},
		{"raises to minReplicas", autoscaler(3, cpu50), &fakeScaler{replicas: 1, selector: "app=web"}, fakeMetrics{}, []int32{3},
			map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{autoscalingv2.ScalingLimited: limitTooFew}, 1},
		{"no metrics API", autoscaler(1, cpu50), &fakeScaler{replicas: 2, selector: "app=web"}, fakeMetrics{err: errors.New("the server could not find the requested resource")}, nil,
			map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{autoscalingv2.AbleToScale: "SucceededGetScale", autoscalingv2.ScalingActive: "FailedGetResourceMetric"}, 1},
		{"missing target", autoscaler(1, cpu50), &fakeScaler{getErr: errors.New("deployments.apps \"web\" not found")}, fakeMetrics{}, nil,
			map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{autoscalingv2.AbleToScale: "FailedGetScale"}, 1},
		{"scaled to zero disables", autoscaler(1, cpu50), &fakeScaler{replicas: 0, selector: "app=web"}, fakeMetrics{}, nil,
			map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{autoscalingv2.ScalingActive: "ScalingDisabled"}, 0},
		{"custom metrics reported unsupported", autoscaler(1, autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType}), &fakeScaler{replicas: 2, selector: "app=web"}, fakeMetrics{}, nil,
			map[autoscalingv2.HorizontalPodAutoscalerConditionType]string{autoscalingv2.ScalingActive: "FailedGetPodsMetric"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			objs := []runtime.Object{tt.hpa}
			for _, p := range pods(2, labelled) {
				objs = append(objs, p)
			}
			client := fake.NewClientset(objs...)
			factory := informers.NewSharedInformerFactory(client, 0)
			recorder := record.NewFakeRecorder(20)
			c, err := New(Options{
				Client: client, Autoscalers: factory.Autoscaling().V2().HorizontalPodAutoscalers(), Pods: factory.Core().V1().Pods(),
				Scaler: tt.scaler, Metrics: tt.metrics, Recorder: recorder,
				SyncPeriod: 15 * time.Second, DownscaleWindow: 5 * time.Minute, Tolerance: 0.1,
				CPUInitialization: 5 * time.Minute, InitialReadinessDelay: 30 * time.Second,
				Now: func() time.Time { return t0 },
			})
			if err != nil {
				t.Fatal(err)
			}
			factory.Start(ctx.Done())
			factory.WaitForCacheSync(ctx.Done())
			if err := c.reconcile(ctx, "ns/web", tt.hpa.DeepCopy()); err != nil {
				t.Fatal(err)
			}
			if len(tt.scaler.updated) != len(tt.wantScale) || (len(tt.wantScale) > 0 && tt.scaler.updated[0] != tt.wantScale[0]) {
				t.Errorf("scale updates %v, want %v", tt.scaler.updated, tt.wantScale)
			}
			got, _ := client.AutoscalingV2().HorizontalPodAutoscalers("ns").Get(ctx, "web", metav1.GetOptions{})
			for ct, reason := range tt.wantConds {
				found := false
				for _, c := range got.Status.Conditions {
					if c.Type == ct {
						found = true
						if c.Reason != reason {
							t.Errorf("%s reason %q, want %q (%s)", ct, c.Reason, reason, c.Message)
						}
					}
				}
				if !found {
					t.Errorf("no %s condition in %+v", ct, got.Status.Conditions)
				}
			}
			if len(recorder.Events) != tt.wantEvents {
				t.Errorf("events = %d, want %d", len(recorder.Events), tt.wantEvents)
			}
		})
	}
}
