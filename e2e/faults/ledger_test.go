package faults

import (
	"context"
	"errors"
	"net"
	"net/url"
	"reflect"
	"slices"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

func TestLedgerCheck(t *testing.T) {
	failed := errors.New("timeout")
	type write struct {
		name  string
		value int64
		err   error
	}
	tests := []struct {
		name   string
		writes []write
		held   map[string]int64
		want   []string
	}{
		{name: "last acknowledged value held",
			writes: []write{{"a", 1, nil}, {"a", 2, nil}}, held: map[string]int64{"a": 2}},
		{name: "an older value is a lost write",
			writes: []write{{"a", 1, nil}, {"a", 2, nil}}, held: map[string]int64{"a": 1},
			want: []string{"a: acknowledged value 2 is lost: the object holds 1"}},
		{name: "a gone object is a lost write",
			writes: []write{{"a", 1, nil}}, held: map[string]int64{},
			want: []string{"a: acknowledged value 1 is lost: the object is gone"}},
		{name: "a failed write after the acknowledged one may have happened",
			writes: []write{{"a", 1, nil}, {"a", 2, failed}, {"a", 3, failed}}, held: map[string]int64{"a": 2}},
		{name: "or not",
			writes: []write{{"a", 1, nil}, {"a", 2, failed}}, held: map[string]int64{"a": 1}},
		{name: "an acknowledgement supersedes the unknown values before it",
			writes: []write{{"a", 1, failed}, {"a", 2, nil}}, held: map[string]int64{"a": 1},
			want: []string{"a: acknowledged value 2 is lost: the object holds 1"}},
		{name: "a creation never acknowledged may be missing",
			writes: []write{{"b", 1, failed}}, held: map[string]int64{}},
		{name: "a value nobody wrote",
			writes: []write{{"b", 1, failed}}, held: map[string]int64{"b": 7},
			want: []string{"b: holds 7, which was never written"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLedger()
			now := time.Now()
			for _, w := range tt.writes {
				l.Record(w.name, w.value, now, now, w.err)
			}
			if got := l.Check(tt.held); !slices.Equal(got, tt.want) {
				t.Errorf("Check = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLedgerWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	l := NewLedger()
	// Two writers; one fails from 2 s to 5 s, the other is silent then.
	for _, o := range []struct {
		end float64
		ok  bool
	}{{0.5, true}, {1, true}, {2, false}, {3, false}, {5.5, true}, {6, true}, {9, true}} {
		var err error
		if !o.ok {
			err = errors.New("refused")
		}
		l.Record("a", 1, at(o.end-0.1), at(o.end), err)
	}
	got := l.Window(at(0), at(7))
	want := Window{Requests: 6, Failed: 2, LongestGap: 4500 * time.Millisecond, Failures: map[string]int{"refused": 2},
		GapStart: at(1), P50: 100 * time.Millisecond, P99: 100 * time.Millisecond}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Window = %+v, want %+v", got, want)
	}
	if got.String() != "2× refused" {
		t.Errorf("Window.String = %q, want the failures by kind", got.String())
	}
	if got := l.Window(at(8), at(8.5)); got.LongestGap != 500*time.Millisecond || got.Requests != 0 {
		t.Errorf("an empty window = %+v, want a gap of its whole length", got)
	}
	if got := l.Acknowledged(); got != 5 {
		t.Errorf("Acknowledged = %d, want 5", got)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{context.DeadlineExceeded, "timeout"},
		{&url.Error{Op: "Patch", URL: "https://10.214.9.100:6443/api/v1/namespaces/faults/configmaps/w1-3", Err: errors.New("connection refused")}, "connection refused"},
		{&url.Error{Op: "Patch", URL: "https://10.214.9.100:6443/", Err: &net.OpError{Op: "read", Net: "tcp",
			Addr: &net.TCPAddr{Port: 6443}, Err: syscall.ECONNRESET}}, "read: connection reset by peer"},
		{apierrors.NewServiceUnavailable("etcd leader changed"), "503 ServiceUnavailable: etcd leader changed"},
	}
	for _, tt := range tests {
		if got := classify(tt.err); got != tt.want {
			t.Errorf("classify(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
