// Package netperf measures a network path between two processes over TCP:
// bulk throughput (the client sends as fast as the path takes for a while,
// the server counts) and the round-trip time of one byte. The echo image
// serves it so that tests can compare pods' network with the nodes' own.
package netperf

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"time"
)

// The first byte a client sends says what it measures.
const (
	modeThroughput byte = 'T'
	modeRTT        byte = 'R'
)

// Serve answers measurements on ln until ctx ends.
func Serve(ctx context.Context, ln net.Listener) error {
	go func() {
		<-ctx.Done()
		_ = ln.Close()
	}()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("accept: %w", err)
		}
		go func() {
			defer conn.Close()
			_ = serveConn(conn)
		}()
	}
}

func serveConn(conn net.Conn) error {
	mode := make([]byte, 1)
	if _, err := io.ReadFull(conn, mode); err != nil {
		return err
	}
	switch mode[0] {
	case modeThroughput:
		// Count until the client closes its side, then tell it how much came.
		n, err := io.Copy(io.Discard, conn)
		if err != nil {
			return err
		}
		return binary.Write(conn, binary.BigEndian, uint64(n))
	case modeRTT:
		b := make([]byte, 1)
		for {
			if _, err := io.ReadFull(conn, b); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			if _, err := conn.Write(b); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unknown mode %q", mode[0])
	}
}

// Throughput is what one bulk transfer achieved.
type Throughput struct {
	// Bytes is what the server received.
	Bytes uint64 `json:"bytes"`
	// Seconds is from the first byte sent to the server's count.
	Seconds float64 `json:"seconds"`
	// Gbps is Bytes*8/Seconds, in 10^9 bits a second.
	Gbps float64 `json:"gbps"`
}

// chunk is the size of each write: large enough that system calls are not
// what limits the rate.
const chunk = 128 << 10

// MeasureThroughput sends to addr for d and returns what the server counted.
func MeasureThroughput(ctx context.Context, addr string, d time.Duration) (Throughput, error) {
	var r Throughput
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return r, fmt.Errorf("dial %s: %w", addr, err)
	}
	defer conn.Close()
	tcp, ok := conn.(*net.TCPConn)
	if !ok {
		return r, fmt.Errorf("dial %s: not a TCP connection", addr)
	}
	if _, err := tcp.Write([]byte{modeThroughput}); err != nil {
		return r, fmt.Errorf("send to %s: %w", addr, err)
	}
	buf := make([]byte, chunk)
	start := time.Now()
	_ = tcp.SetWriteDeadline(start.Add(d))
	for {
		if _, err := tcp.Write(buf); err != nil {
			if errors.Is(err, ctx.Err()) || isTimeout(err) {
				break
			}
			return r, fmt.Errorf("send to %s: %w", addr, err)
		}
	}
	_ = tcp.SetWriteDeadline(time.Time{})
	if err := tcp.CloseWrite(); err != nil {
		return r, fmt.Errorf("close the sending side to %s: %w", addr, err)
	}
	_ = tcp.SetReadDeadline(time.Now().Add(30 * time.Second))
	if err := binary.Read(tcp, binary.BigEndian, &r.Bytes); err != nil {
		return r, fmt.Errorf("read the count from %s: %w", addr, err)
	}
	r.Seconds = time.Since(start).Seconds()
	r.Gbps = float64(r.Bytes) * 8 / r.Seconds / 1e9
	return r, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// RTT are the round trips of one byte on one connection.
type RTT struct {
	Count int `json:"count"`
	// MedianMicros and P99Micros are the median and 99th percentile, in µs.
	MedianMicros float64 `json:"medianMicros"`
	P99Micros    float64 `json:"p99Micros"`
}

// MeasureRTT sends one byte to addr and waits for it back, n times.
func MeasureRTT(ctx context.Context, addr string, n int) (RTT, error) {
	if n < 1 {
		return RTT{}, fmt.Errorf("count %d: want at least 1", n)
	}
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return RTT{}, fmt.Errorf("dial %s: %w", addr, err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte{modeRTT}); err != nil {
		return RTT{}, fmt.Errorf("send to %s: %w", addr, err)
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	b := []byte{1}
	times := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if _, err := conn.Write(b); err != nil {
			return RTT{}, fmt.Errorf("send to %s: %w", addr, err)
		}
		if _, err := io.ReadFull(conn, b); err != nil {
			return RTT{}, fmt.Errorf("read from %s: %w", addr, err)
		}
		times = append(times, time.Since(start))
	}
	return summarize(times), nil
}

func summarize(times []time.Duration) RTT {
	slices.Sort(times)
	micros := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	return RTT{
		Count:        len(times),
		MedianMicros: micros(times[len(times)/2]),
		P99Micros:    micros(times[min(len(times)-1, len(times)*99/100)]),
	}
}
