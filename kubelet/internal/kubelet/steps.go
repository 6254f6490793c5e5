package kubelet

import (
	"context"
	"time"

	"trireme.dev/kubelet/internal/metrics"
)

// startSteps times the steps of a pod's start-up, from the kubelet first
// seeing it to its status written with every container running, so that
// where a pod waits shows in the "Pod started" log line (V(2)) and in the
// pod_start_step_duration_seconds histogram. A nil *startSteps records
// nothing: syncs after start-up carry none.
type startSteps struct {
	last  time.Time
	steps []any
}

type startStepsKey struct{}

// withStartSteps returns ctx carrying s.
func withStartSteps(ctx context.Context, s *startSteps) context.Context {
	if s == nil {
		return ctx
	}
	return context.WithValue(ctx, startStepsKey{}, s)
}

// stepsFrom returns the recorder ctx carries, nil if none.
func stepsFrom(ctx context.Context) *startSteps {
	s, _ := ctx.Value(startStepsKey{}).(*startSteps)
	return s
}

// step records that the step named name ended now: it took the time since
// the previous step ended.
func (s *startSteps) step(name string) {
	if s == nil {
		return
	}
	now := time.Now()
	d := now.Sub(s.last)
	s.last = now
	s.steps = append(s.steps, name, d.Round(time.Microsecond).String())
	metrics.PodStartStepDuration.WithLabelValues(name).Observe(d.Seconds())
}
