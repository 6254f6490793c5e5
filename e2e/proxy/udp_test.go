package proxy_test

import (
	"trireme.dev/componentbase/netns"

	"net"
	"strconv"
	"testing"
	"time"
)

// serveUDP answers every datagram to port in endpoint namespace i with the
// endpoint's name. The socket is made in that namespace and served from
// the test process.
func (tp *topology) serveUDP(t *testing.T, i, port int) {
	t.Helper()
	var pc net.PacketConn
	if err := netns.Run(tp.eps[i], func() error {
		var err error
		pc, err = net.ListenPacket("udp4", net.JoinHostPort(tp.epIPs[i], itoa(port)))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			_, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo([]byte(tp.eps[i]), from)
		}
	}()
}

// udpConn is a UDP socket in the client namespace, "connected" to addr,
// so that every datagram it sends belongs to one conntrack flow.
func udpConn(t *testing.T, ns, addr string) net.Conn {
	t.Helper()
	c, err := netns.Dialer(ns)(t.Context(), "udp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// ask sends one datagram on c and returns the answer, "" on timeout.
func ask(c net.Conn) string {
	if _, err := c.Write([]byte("who?")); err != nil {
		return ""
	}
	_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	buf := make([]byte, 100)
	n, err := c.Read(buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

func itoa(i int) string { return strconv.Itoa(i) }
