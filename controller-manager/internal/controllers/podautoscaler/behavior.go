package podautoscaler

import (
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/utils/ptr"
)

// recommendation is a replica count proposed at a time.
type recommendation struct {
	replicas int32
	at       time.Time
}

// scaleEvent is a change of replicas this controller made.
type scaleEvent struct {
	change int32 // replicas added (scale up) or removed (scale down)
	at     time.Time
}

// history is what one autoscaler remembers between syncs.
type history struct {
	recommendations []recommendation
	ups, downs      []scaleEvent
}

// defaultBehavior fills the behaviour an autoscaler leaves unset with
// upstream's defaults; downWindow is
// --horizontal-pod-autoscaler-downscale-stabilization.
func defaultBehavior(b *autoscalingv2.HorizontalPodAutoscalerBehavior, downWindow time.Duration) autoscalingv2.HorizontalPodAutoscalerBehavior {
	out := autoscalingv2.HorizontalPodAutoscalerBehavior{}
	if b != nil {
		out = *b.DeepCopy()
	}
	if out.ScaleUp == nil {
		out.ScaleUp = &autoscalingv2.HPAScalingRules{}
	}
	if out.ScaleUp.StabilizationWindowSeconds == nil {
		out.ScaleUp.StabilizationWindowSeconds = ptr.To[int32](0)
	}
	if out.ScaleUp.SelectPolicy == nil {
		out.ScaleUp.SelectPolicy = ptr.To(autoscalingv2.MaxChangePolicySelect)
	}
	if len(out.ScaleUp.Policies) == 0 {
		out.ScaleUp.Policies = []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		}
	}
	if out.ScaleDown == nil {
		out.ScaleDown = &autoscalingv2.HPAScalingRules{}
	}
	if out.ScaleDown.StabilizationWindowSeconds == nil {
		out.ScaleDown.StabilizationWindowSeconds = ptr.To(int32(downWindow / time.Second))
	}
	if out.ScaleDown.SelectPolicy == nil {
		out.ScaleDown.SelectPolicy = ptr.To(autoscalingv2.MaxChangePolicySelect)
	}
	if len(out.ScaleDown.Policies) == 0 {
		out.ScaleDown.Policies = []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		}
	}
	return out
}

// stabilize records proposal and returns the recommendation the windows
// allow: never above the lowest proposal of the scale-up window, never
// below the highest of the scale-down window, so that a brief spike or
// dip does not make the target flap.
func (h *history) stabilize(current, proposal int32, b autoscalingv2.HorizontalPodAutoscalerBehavior, now time.Time) int32 {
	if len(h.recommendations) == 0 {
		// A fresh autoscaler (or controller) counts the current size as
		// its first recommendation, as upstream: a restart must not skip
		// the scale-down window.
		h.recommendations = []recommendation{{replicas: current, at: now}}
	}
	upCutoff := now.Add(-time.Duration(*b.ScaleUp.StabilizationWindowSeconds) * time.Second)
	downCutoff := now.Add(-time.Duration(*b.ScaleDown.StabilizationWindowSeconds) * time.Second)
	up, down := proposal, proposal
	longest := upCutoff
	if downCutoff.Before(longest) {
		longest = downCutoff
	}
	kept := h.recommendations[:0]
	for _, r := range h.recommendations {
		if r.at.After(upCutoff) {
			up = min(up, r.replicas)
		}
		if r.at.After(downCutoff) {
			down = max(down, r.replicas)
		}
		if r.at.After(longest) {
			kept = append(kept, r)
		}
	}
	h.recommendations = append(kept, recommendation{replicas: proposal, at: now})
	result := current
	if result < up {
		result = up
	}
	if result > down {
		result = down
	}
	return result
}

// changed sums the changes of events within period before now.
func changed(events []scaleEvent, period time.Duration, now time.Time) int32 {
	var sum int32
	for _, e := range events {
		if e.at.After(now.Add(-period)) {
			sum += e.change
		}
	}
	return sum
}

// scaleUpLimit is the most replicas the scale-up policies allow now.
func (h *history) scaleUpLimit(current int32, rules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	sel := *rules.SelectPolicy
	if sel == autoscalingv2.DisabledPolicySelect {
		return current
	}
	limit := int32(math.MinInt32)
	if sel == autoscalingv2.MinChangePolicySelect {
		limit = math.MaxInt32
	}
	for _, p := range rules.Policies {
		start := current - changed(h.ups, time.Duration(p.PeriodSeconds)*time.Second, now)
		var l int32
		if p.Type == autoscalingv2.PodsScalingPolicy {
			l = start + p.Value
		} else {
			l = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		if sel == autoscalingv2.MinChangePolicySelect {
			limit = min(limit, l)
		} else {
			limit = max(limit, l)
		}
	}
	return max(limit, current)
}

// scaleDownLimit is the fewest replicas the scale-down policies allow now.
func (h *history) scaleDownLimit(current int32, rules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	sel := *rules.SelectPolicy
	if sel == autoscalingv2.DisabledPolicySelect {
		return current
	}
	limit := int32(math.MaxInt32)
	if sel == autoscalingv2.MinChangePolicySelect {
		limit = math.MinInt32
	}
	for _, p := range rules.Policies {
		start := current + changed(h.downs, time.Duration(p.PeriodSeconds)*time.Second, now)
		var l int32
		if p.Type == autoscalingv2.PodsScalingPolicy {
			l = start - p.Value
		} else {
			l = int32(math.Floor(float64(start) * (1 - float64(p.Value)/100)))
		}
		if sel == autoscalingv2.MinChangePolicySelect {
			limit = max(limit, l)
		} else {
			limit = min(limit, l)
		}
	}
	return min(limit, current)
}

// Reasons for the ScalingLimited condition, as upstream's.
const (
	limitTooMany   = "TooManyReplicas"
	limitTooFew    = "TooFewReplicas"
	limitScaleUp   = "ScaleUpLimit"
	limitScaleDown = "ScaleDownLimit"
	withinRange    = "DesiredWithinRange"
)

var limitMessages = map[string]string{
	limitTooMany:   "the desired replica count is more than the maximum replica count",
	limitTooFew:    "the desired replica count is less than the minimum replica count",
	limitScaleUp:   "the desired replica count is increasing faster than the maximum scale rate",
	limitScaleDown: "the desired replica count is decreasing faster than the maximum scale rate",
	withinRange:    "the desired count is within the acceptable range",
}

// normalize stabilizes proposal and keeps it within the rate policies and
// [minReplicas, maxReplicas]. It returns the result, the stabilized
// recommendation before those limits, and which limit (if any) applied.
func (h *history) normalize(current, proposal, minReplicas, maxReplicas int32, b autoscalingv2.HorizontalPodAutoscalerBehavior, now time.Time) (desired, stabilized int32, reason string) {
	desired = h.stabilize(current, proposal, b, now)
	stabilized = desired
	reason = withinRange
	switch {
	case desired > current:
		if up := h.scaleUpLimit(current, b.ScaleUp, now); desired > up {
			desired, reason = up, limitScaleUp
		}
		if desired > maxReplicas {
			desired, reason = maxReplicas, limitTooMany
		}
	case desired < current:
		if down := h.scaleDownLimit(current, b.ScaleDown, now); desired < down {
			desired, reason = down, limitScaleDown
		}
		if desired < minReplicas {
			desired, reason = minReplicas, limitTooFew
		}
	}
	if desired > maxReplicas {
		desired, reason = maxReplicas, limitTooMany
	}
	if desired < minReplicas {
		desired, reason = minReplicas, limitTooFew
	}
	return desired, stabilized, reason
}

// record notes a scale from current to desired.
func (h *history) record(current, desired int32, b autoscalingv2.HorizontalPodAutoscalerBehavior, now time.Time) {
	keep := func(events []scaleEvent, rules *autoscalingv2.HPAScalingRules) []scaleEvent {
		var longest int32
		for _, p := range rules.Policies {
			longest = max(longest, p.PeriodSeconds)
		}
		var out []scaleEvent
		for _, e := range events {
			if e.at.After(now.Add(-time.Duration(longest) * time.Second)) {
				out = append(out, e)
			}
		}
		return out
	}
	if desired > current {
		h.ups = append(keep(h.ups, b.ScaleUp), scaleEvent{change: desired - current, at: now})
	} else if desired < current {
		h.downs = append(keep(h.downs, b.ScaleDown), scaleEvent{change: current - desired, at: now})
	}
}
