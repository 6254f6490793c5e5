package netpol_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"trireme.dev/componentbase/netns"
)

// topology is a node with three local pods on its bridge and a pod of
// another node, reached through a routed link:
//
//	remote 172.28.K.2 ── 172.28.K.1 [node] br0 172.29.K.1 ── web    172.29.K.11
//	                                                   ├── db     172.29.K.12
//	                                                   └── client 172.29.K.13
//
// Traffic between local pods crosses the bridge (policed through
// br_netfilter, as on a flannel node); the remote pod's is routed.
type topology struct {
	node string
	// pods are the namespaces of web, db, client and remote.
	pods map[string]string
	ips  map[string]string
	// nodeIP is the node's address on the bridge.
	nodeIP string
	// prefix names the namespaces; k numbers the subnets.
	prefix string
	k      int
}

// The pods, in the order a matrix lists them.
var podNames = []string{"web", "db", "client", "remote"}

func newTopology(t *testing.T, k int) *topology {
	t.Helper()
	for _, bin := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s not found: apt-get install -y iproute2 nftables", bin)
		}
	}
	// Bridged traffic reaches the inet hooks only with br_netfilter; its
	// sysctl is per network namespace and set in the node's alone.
	if _, err := os.Stat("/proc/sys/net/bridge"); err != nil {
		if out, err := exec.Command("modprobe", "br_netfilter").CombinedOutput(); err != nil {
			t.Fatalf("modprobe br_netfilter: %v: %s", err, out)
		}
	}
	p := fmt.Sprintf("tnp%d", os.Getpid()%100000)
	tp := &topology{node: p + "-node", pods: map[string]string{}, ips: map[string]string{}, nodeIP: fmt.Sprintf("172.29.%d.1", k)}
	add := func(ns string) {
		netns.IP(t, "netns", "add", ns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
		netns.IP(t, "-n", ns, "link", "set", "lo", "up")
	}
	n := tp.node
	add(n)
	netns.IP(t, "netns", "exec", n, "sysctl", "-qw", "net.ipv4.ip_forward=1", "net.bridge.bridge-nf-call-iptables=1")
	netns.IP(t, "-n", n, "link", "add", "br0", "type", "bridge")
	netns.IP(t, "-n", n, "addr", "add", tp.nodeIP+"/24", "dev", "br0")
	netns.IP(t, "-n", n, "link", "set", "br0", "up")
	tp.prefix, tp.k = p, k
	for i, name := range podNames[:3] {
		tp.addLocal(t, name, i)
	}
	remote := p + "-remote"
	add(remote)
	tp.pods["remote"], tp.ips["remote"] = remote, fmt.Sprintf("172.28.%d.2", k)
	netns.IP(t, "-n", n, "link", "add", "veth-remote", "type", "veth", "peer", "name", "eth0", "netns", remote)
	netns.IP(t, "-n", n, "addr", "add", fmt.Sprintf("172.28.%d.1/24", k), "dev", "veth-remote")
	netns.IP(t, "-n", n, "link", "set", "veth-remote", "up")
	netns.IP(t, "-n", remote, "addr", "add", tp.ips["remote"]+"/24", "dev", "eth0")
	netns.IP(t, "-n", remote, "link", "set", "eth0", "up")
	netns.IP(t, "-n", remote, "route", "add", "default", "via", fmt.Sprintf("172.28.%d.1", k))
	for _, name := range podNames {
		tp.serve(t, name)
	}
	return tp
}

// addLocal adds pod i of the node's bridge, 172.29.K.(11+i), in a
// namespace of its own.
func (tp *topology) addLocal(t *testing.T, name string, i int) {
	t.Helper()
	ns, addr := tp.prefix+"-"+name, fmt.Sprintf("172.29.%d.%d", tp.k, 11+i)
	netns.IP(t, "netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	netns.IP(t, "-n", ns, "link", "set", "lo", "up")
	tp.pods[name], tp.ips[name] = ns, addr
	veth := "veth-" + name
	netns.IP(t, "-n", tp.node, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
	netns.IP(t, "-n", tp.node, "link", "set", veth, "master", "br0", "up")
	netns.IP(t, "-n", ns, "addr", "add", addr+"/24", "dev", "eth0")
	netns.IP(t, "-n", ns, "link", "set", "eth0", "up")
	netns.IP(t, "-n", ns, "route", "add", "default", "via", tp.nodeIP)
}

// serve answers TCP on port 80 and UDP on port 53 in a pod's namespace
// with the pod's name, and echoes what it reads on TCP port 81 for as
// long as the connection lasts.
func (tp *topology) serve(t *testing.T, pod string) {
	t.Helper()
	var ln, echo net.Listener
	var pc net.PacketConn
	if err := netns.Run(tp.pods[pod], func() error {
		var err error
		if ln, err = net.Listen("tcp", ":80"); err != nil {
			return err
		}
		if echo, err = net.Listen("tcp", ":81"); err != nil {
			return err
		}
		pc, err = net.ListenPacket("udp", ":53")
		return err
	}); err != nil {
		t.Fatalf("serve in %s: %v", pod, err)
	}
	t.Cleanup(func() { ln.Close(); echo.Close(); pc.Close() })
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte(pod))
			c.Close()
		}
	}()
	go func() {
		buf := make([]byte, 64)
		for {
			_, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo([]byte(pod), from)
		}
	}()
}

// reach says whether from's namespace gets an answer from to over proto
// (tcp: port 80, udp: port 53), within a second.
func (tp *topology) reach(fromNS, to, proto string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	port := "80"
	if proto == "udp" {
		port = "53"
	}
	c, err := netns.Dialer(fromNS)(ctx, proto, net.JoinHostPort(tp.ips[to], port))
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if proto == "udp" {
		if _, err := c.Write([]byte("?")); err != nil {
			return false
		}
	}
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	return (err == nil || errors.Is(err, net.ErrClosed) || n > 0) && string(buf[:n]) == to
}

// matrix probes every pair (and the node itself to each pod) over proto,
// in parallel, and renders what got through: one line per source, "+"
// for reached and "." for not, in podNames' order.
func (tp *topology) matrix(proto string) string {
	sources := append(append([]string(nil), podNames...), "node")
	rows := make([][]byte, len(sources))
	done := make(chan struct{})
	for i, src := range sources {
		rows[i] = []byte(strings.Repeat(" ", len(podNames)))
		ns := tp.node
		if src != "node" {
			ns = tp.pods[src]
		}
		for j, dst := range podNames {
			go func() {
				mark := byte('.')
				if tp.reach(ns, dst, proto) {
					mark = '+'
				}
				rows[i][j] = mark
				done <- struct{}{}
			}()
		}
	}
	for range len(sources) * len(podNames) {
		<-done
	}
	var b strings.Builder
	for i, src := range sources {
		fmt.Fprintf(&b, "%-6s %s\n", src, rows[i])
	}
	return b.String()
}

// echoConn is a connection to a pod's echo port that stays open.
type echoConn struct{ net.Conn }

func (tp *topology) dialEcho(t *testing.T, from, to string) echoConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	c, err := netns.Dialer(tp.pods[from])(ctx, "tcp", net.JoinHostPort(tp.ips[to], "81"))
	if err != nil {
		t.Fatalf("connect %s to %s's echo port: %v", from, to, err)
	}
	t.Cleanup(func() { c.Close() })
	return echoConn{c}
}

// alive says whether the connection still carries a round trip.
func (c echoConn) alive() bool {
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("x")); err != nil {
		return false
	}
	buf := make([]byte, 1)
	n, err := c.Read(buf)
	return err == nil && n == 1
}
