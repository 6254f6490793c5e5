package scheduler

import (
	"context"
	"fmt"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/client-go/tools/events"
)

// eventWriters bounds the Event writes in flight. Events are informative
// and bindings are the scheduler's output: in a burst, with a binding and
// an event per pod, unbounded event writes would take half the
// apiserver's capacity from the bindings. Held back, they are written
// after the burst instead — none is dropped for it (the broadcaster queues
// each in its own goroutine).
const eventWriters = 4

// boundedSink is an events.EventSink that lets at most cap(slots) writes
// reach the apiserver at a time.
type boundedSink struct {
	inner events.EventSink
	slots chan struct{}
}

var _ events.EventSink = (*boundedSink)(nil)

func newBoundedSink(inner events.EventSink, n int) *boundedSink {
	return &boundedSink{inner: inner, slots: make(chan struct{}, n)}
}

func (s *boundedSink) acquire(ctx context.Context) error {
	select {
	case s.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("event not written: %w", context.Cause(ctx))
	}
}

func (s *boundedSink) release() { <-s.slots }

// Create implements events.EventSink.
func (s *boundedSink) Create(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	if err := s.acquire(ctx); err != nil {
		return nil, err
	}
	defer s.release()
	return s.inner.Create(ctx, e)
}

// Update implements events.EventSink.
func (s *boundedSink) Update(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	if err := s.acquire(ctx); err != nil {
		return nil, err
	}
	defer s.release()
	return s.inner.Update(ctx, e)
}

// Patch implements events.EventSink.
func (s *boundedSink) Patch(ctx context.Context, e *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	if err := s.acquire(ctx); err != nil {
		return nil, err
	}
	defer s.release()
	return s.inner.Patch(ctx, e, data)
}
