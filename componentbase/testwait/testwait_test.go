package testwait

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	p := Poll{Interval: time.Millisecond}
	tests := []struct {
		name    string
		cond    func(calls int) (bool, error)
		wantErr string
	}{
		{"true at once", func(int) (bool, error) { return true, nil }, ""},
		{"true after errors", func(calls int) (bool, error) {
			if calls < 3 {
				return false, errors.New("not yet")
			}
			return true, nil
		}, ""},
		{"never true", func(int) (bool, error) { return false, nil }, "not after 20ms"},
		{"never true, with the last error", func(calls int) (bool, error) {
			return false, errors.New("still missing")
		}, "last error: still missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := p.Until(context.Background(), 20*time.Millisecond, func(context.Context) (bool, error) {
				calls++
				return tt.cond(calls)
			})
			if tt.wantErr == "" && err != nil {
				t.Fatalf("err = %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// A call the deadline cuts short fails with the deadline; the error
// reported is the one of the last call that ran whole.
func TestUntilKeepsTheLastWholeError(t *testing.T) {
	calls := 0
	err := Poll{Interval: time.Millisecond}.Until(context.Background(), 50*time.Millisecond, func(ctx context.Context) (bool, error) {
		if calls++; calls < 3 {
			return false, errors.New("apiserver not ready")
		}
		<-ctx.Done()
		return false, ctx.Err()
	})
	if err == nil || !strings.Contains(err.Error(), "apiserver not ready") {
		t.Fatalf("err = %v, want the last whole call's error", err)
	}
}

func TestUntilEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Default.Until(ctx, time.Hour, func(context.Context) (bool, error) { return false, nil }); err == nil {
		t.Fatal("Until returned nil on an ended context")
	}
}

func TestForHelpers(t *testing.T) {
	n := 0
	ForTrue(t, time.Second, "the third call", func() bool { n++; return n >= 3 })
	ForNil(t, time.Second, "the fifth call", func() error {
		if n++; n < 5 {
			return errors.New("early")
		}
		return nil
	})
	For(t, time.Second, "at once", func(context.Context) (bool, error) { return true, nil })
}
