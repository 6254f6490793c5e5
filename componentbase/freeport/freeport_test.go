package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestFor(t *testing.T) {
	for i := 0; i < 3; i++ {
		port := For(t)
		if port <= 0 || port > 65535 {
			t.Fatalf("port %d out of range", port)
		}
		// Free: the caller can bind it.
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("bind the free port %d: %v", port, err)
		}
		l.Close()
	}
}
