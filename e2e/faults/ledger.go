package faults

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	loadstats "trireme.dev/e2e/internal/load"
)

// Ledger records the writes of the suite's load: for every object the value
// the apiserver last acknowledged and the values written since whose outcome
// is unknown (the request failed or timed out: etcd may have committed it), and
// when each request started and ended. Check compares it with what the
// cluster holds once the faults are healed.
type Ledger struct {
	mu      sync.Mutex
	objects map[string]*record
	ops     []op
}

// record is one object's history as the writers saw it.
type record struct {
	// acked is the last acknowledged value; ackedOK says there is one.
	acked   int64
	ackedOK bool
	// unknown are the values written after acked whose outcome is unknown.
	unknown []int64
}

type op struct {
	start, end time.Time
	ok         bool
	// failure is the kind of error a failed request met (classify).
	failure string
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{objects: map[string]*record{}} }

// Record notes a write of value to object name, from start to end, and
// whether the apiserver acknowledged it (err == nil). A writer writes one
// object's values in order, so an acknowledgement supersedes every value
// written before it.
func (l *Ledger) Record(name string, value int64, start, end time.Time, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.objects[name]
	if r == nil {
		r = &record{}
		l.objects[name] = r
	}
	if err == nil {
		r.acked, r.ackedOK, r.unknown = value, true, nil
	} else {
		r.unknown = append(r.unknown, value)
	}
	o := op{start: start, end: end, ok: err == nil}
	if err != nil {
		o.failure = classify(err)
	}
	l.ops = append(l.ops, o)
}

// Check compares the ledger with held, each object's value as the cluster
// holds it (absent: no such object). It returns one line per acknowledged
// write that is lost — the object is gone or holds an older value — and per
// object holding a value nobody wrote.
func (l *Ledger) Check(held map[string]int64) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var problems []string
	names := make([]string, 0, len(l.objects))
	for n := range l.objects {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		r := l.objects[name]
		v, ok := held[name]
		switch {
		case !ok && r.ackedOK:
			problems = append(problems, fmt.Sprintf("%s: acknowledged value %d is lost: the object is gone", name, r.acked))
		case !ok:
			// Never acknowledged: its creation may not have happened.
		case r.ackedOK && v == r.acked, slices.Contains(r.unknown, v):
		case r.ackedOK:
			problems = append(problems, fmt.Sprintf("%s: acknowledged value %d is lost: the object holds %d", name, r.acked, v))
		default:
			problems = append(problems, fmt.Sprintf("%s: holds %d, which was never written", name, v))
		}
	}
	return problems
}

// Acknowledged is how many writes the apiserver acknowledged.
func (l *Ledger) Acknowledged() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, o := range l.ops {
		if o.ok {
			n++
		}
	}
	return n
}

// Window is what the load saw between two moments.
type Window struct {
	// Requests ended in the window; Failed of them were not acknowledged.
	Requests, Failed int
	// Failures counts the failed requests by the kind of error they met.
	Failures map[string]int
	// LongestGap is the longest time in the window without an acknowledged
	// write ending, the window's start and end included: how long writes
	// were unavailable.
	LongestGap time.Duration
	// GapStart is when the longest gap began.
	GapStart time.Time
	// P50 and P99 are the latencies of the acknowledged requests.
	P50, P99 time.Duration
}

// Window summarizes the requests that ended between from and to.
func (l *Ledger) Window(from, to time.Time) Window {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := Window{Failures: map[string]int{}}
	// The ops are in the order they ended per writer, not across writers.
	var ends []time.Time
	var latencies []time.Duration
	for _, o := range l.ops {
		if o.end.Before(from) || o.end.After(to) {
			continue
		}
		w.Requests++
		if o.ok {
			ends = append(ends, o.end)
			latencies = append(latencies, o.end.Sub(o.start))
		} else {
			w.Failed++
			w.Failures[o.failure]++
		}
	}
	sort.Slice(ends, func(i, j int) bool { return ends[i].Before(ends[j]) })
	last := from
	for _, e := range append(ends, to) {
		if gap := e.Sub(last); gap > w.LongestGap {
			w.LongestGap, w.GapStart = gap, last
		}
		last = e
	}
	slices.Sort(latencies)
	w.P50, w.P99 = loadstats.Percentile(latencies, 50), loadstats.Percentile(latencies, 99)
	return w
}

// String is the failures, most frequent first: "90× timeout, 8× 503 ServiceUnavailable".
func (w Window) String() string {
	kinds := make([]string, 0, len(w.Failures))
	for k := range w.Failures {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if w.Failures[kinds[i]] != w.Failures[kinds[j]] {
			return w.Failures[kinds[i]] > w.Failures[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d× %s", w.Failures[k], k)
	}
	return strings.Join(parts, ", ")
}

// classify names the kind of error a request met, without the object it
// was about: "timeout", an API status ("503 ServiceUnavailable: ..."), or
// the transport's error.
func classify(err error) string {
	var status apierrors.APIStatus
	var uerr *url.Error
	var operr *net.OpError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return "timeout"
	case errors.As(err, &status):
		s := status.Status()
		msg := s.Message
		if len(msg) > 60 {
			msg = msg[:60] + "..."
		}
		return fmt.Sprintf("%d %s: %s", s.Code, s.Reason, msg)
	case errors.As(err, &uerr) && uerr.Timeout():
		return "timeout"
	case errors.As(err, &operr):
		// Without the addresses: the local port differs every time.
		return operr.Op + ": " + operr.Err.Error()
	case errors.As(err, &uerr):
		return uerr.Err.Error()
	}
	return err.Error()
}

// ParseValue reads a value as the load writes it into an object.
func ParseValue(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("value %q: %w", s, err)
	}
	return v, nil
}
