package podautoscaler

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/ptr"
)

func TestNormalize(t *testing.T) {
	defaults := defaultBehavior(nil, 5*time.Minute)
	noWindows := defaultBehavior(&autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](0)},
	}, 5*time.Minute)
	slowUp := defaultBehavior(&autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp: &autoscalingv2.HPAScalingRules{Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}}},
	}, 5*time.Minute)
	disabledDown := defaultBehavior(&autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleDown: &autoscalingv2.HPAScalingRules{SelectPolicy: ptr.To(autoscalingv2.DisabledPolicySelect), StabilizationWindowSeconds: ptr.To[int32](0)},
	}, 5*time.Minute)
	type step struct {
		after      time.Duration
		current    int32
		proposal   int32
		want       int32
		wantReason string
	}
	tests := []struct {
		name     string
		behavior autoscalingv2.HorizontalPodAutoscalerBehavior
		min, max int32
		steps    []step
	}{
		{"scale up at once within limits", defaults, 1, 10, []step{{0, 2, 5, 5, withinRange}}},
		{"scale up capped by max", defaults, 1, 10, []step{{0, 8, 15, 10, limitTooMany}}},
		{"scale up rate: 4 pods or 100% a 15s", defaults, 1, 100, []step{{0, 2, 20, 6, limitScaleUp}}},
		{"scale down waits out the 5m window", defaults, 1, 10, []step{
			{0, 6, 6, 6, withinRange}, {time.Minute, 6, 2, 6, withinRange}, {5 * time.Minute, 6, 2, 2, withinRange},
		}},
		{"scale down at once without a window, floored at min", noWindows, 3, 10, []step{{0, 6, 1, 3, limitTooFew}}},
		{"one pod a minute up, across syncs", slowUp, 1, 10, []step{
			{0, 2, 8, 3, limitScaleUp}, {30 * time.Second, 3, 8, 3, limitScaleUp}, {61 * time.Second, 3, 8, 4, limitScaleUp},
		}},
		{"scale down disabled", disabledDown, 1, 10, []step{{0, 6, 2, 6, limitScaleDown}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &history{}
			now := t0
			for i, s := range tt.steps {
				now = now.Add(s.after)
				got, _, reason := h.normalize(s.current, s.proposal, tt.min, tt.max, tt.behavior, now)
				if got != s.want || reason != s.wantReason {
					t.Errorf("step %d: normalize(%d→%d) = %d %s, want %d %s", i, s.current, s.proposal, got, reason, s.want, s.wantReason)
				}
				h.record(s.current, got, tt.behavior, now)
			}
		})
	}
}
