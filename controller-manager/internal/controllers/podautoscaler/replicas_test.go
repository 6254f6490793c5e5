package podautoscaler

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// runningPod has a 100m CPU request, started long ago and ready.
func runningPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
		}}}},
		Status: corev1.PodStatus{
			Phase:     corev1.PodRunning,
			StartTime: &metav1.Time{Time: t0.Add(-time.Hour)},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
				LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))}},
		},
	}
}

func pods(n int, modify ...func(int, *corev1.Pod)) []*corev1.Pod {
	var out []*corev1.Pod
	for i := range n {
		p := runningPod(fmt.Sprintf("p%d", i))
		for _, m := range modify {
			m(i, p)
		}
		out = append(out, p)
	}
	return out
}

func usage(values ...int64) map[string]PodMetric {
	m := map[string]PodMetric{}
	for i, v := range values {
		m[fmt.Sprintf("p%d", i)] = PodMetric{Value: v, Timestamp: t0, Window: 30 * time.Second}
	}
	return m
}

func TestResourceReplicas(t *testing.T) {
	calc := calculator{tolerance: 0.1, cpuInitialization: 5 * time.Minute, initialReadiness: 30 * time.Second, now: func() time.Time { return t0 }}
	tests := []struct {
		name     string
		current  int32
		target   *int32
		average  int64
		metrics  map[string]PodMetric
		pods     []*corev1.Pod
		want     int32
		wantUtil int32
		wantErr  bool
	}{
		{"double the target doubles", 2, ptr.To[int32](50), 0, usage(100, 100), pods(2), 4, 100, false},
		{"within tolerance stays", 3, ptr.To[int32](50), 0, usage(52, 53, 54), pods(3), 3, 53, false},
		{"half the target halves", 4, ptr.To[int32](50), 0, usage(25, 25, 25, 25), pods(4), 2, 25, false},
		{"average value target", 2, nil, 50, usage(150, 150), pods(2), 6, 0, false},
		{"missing pod damps scale down", 3, ptr.To[int32](50), 0, usage(10, 10), pods(3), 3, 10, false},
		{"missing pod counts as nothing on scale up", 3, ptr.To[int32](50), 0, usage(200, 200), pods(3), 8, 200, false},
		{"unready pod ignored on scale up", 2, ptr.To[int32](50), 0, usage(100, 100), pods(2, func(i int, p *corev1.Pod) {
			if i == 1 {
				p.Status.Conditions[0].Status = corev1.ConditionFalse
				p.Status.StartTime = &metav1.Time{Time: t0.Add(-time.Minute)}
			}
		}), 2, 100, false},
		{"pending pods are not counted", 2, ptr.To[int32](50), 0, usage(100), pods(2, func(i int, p *corev1.Pod) {
			if i == 1 {
				p.Status.Phase = corev1.PodPending
			}
		}), 2, 100, false},
		{"no pods is an error", 2, ptr.To[int32](50), 0, usage(), nil, 0, 0, true},
		{"no metrics is an error", 2, ptr.To[int32](50), 0, map[string]PodMetric{}, pods(2), 0, 0, true},
		{"missing request is an error", 1, ptr.To[int32](50), 0, usage(10), pods(1, func(_ int, p *corev1.Pod) { p.Spec.Containers[0].Resources = corev1.ResourceRequirements{} }), 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, util, _, err := calc.resourceReplicas(tt.current, tt.target, tt.average, corev1.ResourceCPU, "", tt.metrics, tt.pods)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got != tt.want || util != tt.wantUtil {
				t.Errorf("replicas %d utilization %d, want %d %d", got, util, tt.want, tt.wantUtil)
			}
		})
	}
}
