// Package freeport finds TCP ports on the loopback address that nothing
// listens on, for tests (and the embedded etcd) that must name a port
// before the server that binds it starts.
//
// A port is free only when it is picked: another process may take it
// before the caller binds it. Callers that start servers retry on
// "address already in use", or bind port 0 themselves where they can.
package freeport

import (
	"fmt"
	"net"
	"testing"
)

// Get returns a TCP port on 127.0.0.1 that nothing listened on a moment
// ago.
func Get() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// For is Get for a test: it fails tb when no port can be found.
func For(tb testing.TB) int {
	tb.Helper()
	port, err := Get()
	if err != nil {
		tb.Fatal(err)
	}
	return port
}
