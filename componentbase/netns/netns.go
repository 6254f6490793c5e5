// Package netns is what tests that send real packets share: ip(8),
// running code and dialing inside a network namespace, and a relay that
// lets a component in one reach the apiserver on the host's loopback.
package netns

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	"k8s.io/client-go/tools/clientcmd"
)

// IP runs ip(8) with args, failing tb on error.
func IP(tb testing.TB, args ...string) {
	tb.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		tb.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// Run runs fn on an OS thread switched into network namespace ns.
// The thread is never switched back: the goroutine exits while still
// locked, so the runtime discards it, and nothing else ever runs there.
func Run(ns string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open("/var/run/netns/" + ns)
		if err != nil {
			errc <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// Dialer returns a DialContext whose sockets live in ns.
func Dialer(ns string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := Run(ns, func() error {
			var err error
			c, err = (&net.Dialer{}).DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
}

// Relay listens on 127.0.0.1 inside ns and forwards every connection to
// target in the test's own namespace: a component in a node namespace
// reaches the apiserver, which listens on the host's loopback, this way
// without any interface or address added to the host.
func Relay(tb testing.TB, ns, target string) string {
	tb.Helper()
	var ln net.Listener
	if err := Run(ns, func() error {
		var err error
		ln, err = net.Listen("tcp", "127.0.0.1:0")
		return err
	}); err != nil {
		tb.Fatalf("relay listener in %s: %v", ns, err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer u.Close()
				go func() { _, _ = io.Copy(u, c); u.(*net.TCPConn).CloseWrite() }()
				_, _ = io.Copy(c, u)
			}()
		}
	}()
	return ln.Addr().String()
}

// RelayKubeconfig writes, into dir, a copy of the kubeconfig at path whose
// clusters are reached through a Relay in ns to 127.0.0.1:port, and
// returns the copy's path.
func RelayKubeconfig(tb testing.TB, ns, path string, port int, dir string) string {
	tb.Helper()
	addr := Relay(tb, ns, fmt.Sprintf("127.0.0.1:%d", port))
	kc, err := clientcmd.LoadFromFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	for _, c := range kc.Clusters {
		c.Server = "https://" + addr
	}
	out := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, out); err != nil {
		tb.Fatal(err)
	}
	return out
}
