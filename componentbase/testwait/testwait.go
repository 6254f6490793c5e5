// Package testwait is how tests wait for something to become true: poll a
// condition until it holds or a timeout passes, then fail the test naming
// what was awaited and the condition's last error. Components, informers
// and kernels catch up with a write a moment later; tests never sleep a
// fixed time for that.
package testwait

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Poll waits by calling a condition every Interval.
type Poll struct {
	// Interval is the time between two calls of the condition.
	Interval time.Duration
}

// Default polls every 50ms: quick for conditions that read memory or one
// API object. A condition that runs a process (kubectl, curl) wants a
// Poll of its own with a longer interval.
var Default = Poll{Interval: 50 * time.Millisecond}

// For polls cond with Default; see Poll.For.
func For(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	Default.For(t, timeout, what, cond)
}

// ForNil polls fn with Default; see Poll.ForNil.
func ForNil(t testing.TB, timeout time.Duration, what string, fn func() error) {
	t.Helper()
	Default.ForNil(t, timeout, what, fn)
}

// ForTrue polls cond with Default; see Poll.ForTrue.
func ForTrue(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	Default.ForTrue(t, timeout, what, cond)
}

// For calls cond until it returns true, failing t once timeout has passed.
// An error that comes with false is not fatal (an object not there yet, a
// server still starting): the last one is in the failure message. cond's
// context ends with the test or the timeout.
func (p Poll) For(t testing.TB, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := p.Until(t.Context(), timeout, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// ForNil calls fn until it returns nil, failing t with fn's last error once
// timeout has passed.
func (p Poll) ForNil(t testing.TB, timeout time.Duration, what string, fn func() error) {
	t.Helper()
	p.For(t, timeout, what, func(context.Context) (bool, error) {
		err := fn()
		return err == nil, err
	})
}

// ForTrue calls cond until it returns true, failing t once timeout has
// passed.
func (p Poll) ForTrue(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	p.For(t, timeout, what, func(context.Context) (bool, error) { return cond(), nil })
}

// Until calls cond until it returns true and returns nil, or returns an
// error naming the timeout and cond's last error once timeout has passed
// or ctx has ended: for a test that shows more (a log, the objects) before
// it fails. A call the deadline cut short says only that: its error is
// kept only when no earlier call gave one.
func (p Poll) Until(ctx context.Context, timeout time.Duration, cond func(ctx context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(p.Interval)
	defer tick.Stop()
	var last error
	for {
		ok, err := cond(ctx)
		if ok {
			return nil
		}
		if err != nil && (ctx.Err() == nil || last == nil) {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("not after %v (last error: %w)", timeout, last)
			}
			return fmt.Errorf("not after %v", timeout)
		case <-tick.C:
		}
	}
}
