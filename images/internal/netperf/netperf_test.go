package netperf

import (
	"context"
	"net"
	"slices"
	"testing"
	"time"
)

func serve(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

func TestMeasureThroughput(t *testing.T) {
	addr := serve(t)
	r, err := MeasureThroughput(context.Background(), addr, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if r.Bytes < chunk || r.Seconds < 0.2 || r.Gbps <= 0 {
		t.Errorf("throughput over loopback: %+v", r)
	}
	t.Logf("loopback: %.2f Gbit/s", r.Gbps)
}

func TestMeasureRTT(t *testing.T) {
	addr := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := MeasureRTT(ctx, addr, 200)
	if err != nil {
		t.Fatal(err)
	}
	if r.Count != 200 || r.MedianMicros <= 0 || r.P99Micros < r.MedianMicros {
		t.Errorf("RTT over loopback: %+v", r)
	}
	if _, err := MeasureRTT(ctx, addr, 0); err == nil {
		t.Error("MeasureRTT with count 0 succeeded")
	}
}

func TestSummarize(t *testing.T) {
	us := func(ns ...int) []time.Duration {
		var out []time.Duration
		for _, n := range ns {
			out = append(out, time.Duration(n)*time.Microsecond)
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		times       []time.Duration
		median, p99 float64
	}{
		{"one", us(7), 7, 7},
		{"unsorted", us(30, 10, 20), 20, 30},
		{"a slow tail", append(slices.Repeat(us(10), 99), time.Millisecond), 10, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := summarize(tc.times)
			if r.Count != len(tc.times) || r.MedianMicros != tc.median || r.P99Micros != tc.p99 {
				t.Errorf("summarize = %+v, want median %v p99 %v", r, tc.median, tc.p99)
			}
		})
	}
}

func TestServeRefusesUnknownMode(t *testing.T) {
	addr := serve(t)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte{'?'}); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := conn.Read(make([]byte, 1)); err == nil {
		t.Errorf("the server answered %d bytes to an unknown mode", n)
	}
}
