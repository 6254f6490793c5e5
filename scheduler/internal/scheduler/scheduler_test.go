package scheduler

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fwk "k8s.io/kube-scheduler/framework"
)

func TestNumFeasibleNodesToFind(t *testing.T) {
	tests := []struct {
		percentage, nodes, want int32
	}{
		{0, 50, 50},       // small clusters: every node
		{0, 500, 230},     // adaptive: 50 - 500/125 = 46%
		{0, 5000, 500},    // adaptive: 50 - 40 = 10%
		{0, 100000, 5000}, // adaptive floor of 5%
		{30, 1000, 300},
		{1, 1000, 100}, // never fewer than 100
		{100, 1000, 1000},
	}
	for _, tt := range tests {
		if got := numFeasibleNodesToFind(tt.percentage, tt.nodes); got != tt.want {
			t.Errorf("numFeasibleNodesToFind(%d%%, %d) = %d, want %d", tt.percentage, tt.nodes, got, tt.want)
		}
	}
}

func TestSelectHost(t *testing.T) {
	scores := []fwk.NodePluginScores{{Name: "a", TotalScore: 10}, {Name: "b", TotalScore: 30}, {Name: "c", TotalScore: 30}}
	seen := map[string]bool{}
	for range 200 {
		seen[selectHost(scores)] = true
	}
	if seen["a"] || !seen["b"] || !seen["c"] {
		t.Errorf("hosts chosen %v: want ties between b and c broken at random, never a", seen)
	}
}

func TestUncertain(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{name: "timeout", err: apierrors.NewTimeoutError("slow", 1), want: true},
		{name: "server error", err: apierrors.NewInternalError(errors.New("boom")), want: true},
		{name: "conflict: a retry may meet its own binding", err: apierrors.NewConflict(pods, "p", errors.New("already assigned")), want: true},
		{name: "deadline", err: context.DeadlineExceeded, want: true},
		{name: "pod gone", err: apierrors.NewNotFound(pods, "p"), want: false},
		{name: "refused", err: apierrors.NewForbidden(pods, "p", errors.New("no")), want: false},
		{name: "cancelled", err: context.Canceled, want: false},
	}
	for _, tt := range tests {
		if got := uncertain(tt.err); got != tt.want {
			t.Errorf("%s: uncertain = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestBoundedSinkLimitsWritesInFlight(t *testing.T) {
	inner := &slowSink{release: make(chan struct{})}
	s := newBoundedSink(inner, 2)
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = s.Create(context.Background(), &eventsv1.Event{})
		}()
	}
	// Wait until two writes are in flight; the other three must wait.
	for inner.inFlight.Load() < 2 {
		runtime.Gosched()
	}
	close(inner.release)
	wg.Wait()
	if m := inner.max.Load(); m > 2 {
		t.Errorf("%d writes in flight at once, want at most 2", m)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	full := newBoundedSink(inner, 1)
	full.slots <- struct{}{}
	if _, err := full.Create(ctx, &eventsv1.Event{}); err == nil {
		t.Error("a write waiting for a slot was not given up when its context ended")
	}
}

type slowSink struct {
	release  chan struct{}
	inFlight atomic.Int32
	max      atomic.Int32
}

func (s *slowSink) write() {
	n := s.inFlight.Add(1)
	for {
		m := s.max.Load()
		if n <= m || s.max.CompareAndSwap(m, n) {
			break
		}
	}
	<-s.release
	s.inFlight.Add(-1)
}

func (s *slowSink) Create(context.Context, *eventsv1.Event) (*eventsv1.Event, error) {
	s.write()
	return nil, nil
}

func (s *slowSink) Update(context.Context, *eventsv1.Event) (*eventsv1.Event, error) {
	s.write()
	return nil, nil
}

func (s *slowSink) Patch(context.Context, *eventsv1.Event, []byte) (*eventsv1.Event, error) {
	s.write()
	return nil, nil
}
