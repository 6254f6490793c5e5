package proxy_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// testHost is a network namespace joined to this machine by a veth pair:
// a "host" with its own address that the proxy may reach. The apiserver
// refuses loopback backends, and traffic stays on this machine.
type testHost struct {
	ns, hostLink string
	IP           string
}

// newTestHost makes the namespace and removes it when the test ends.
func newTestHost(t *testing.T) *testHost {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the proxy test makes a network namespace and needs root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatal("the proxy test needs ip(8): apt-get install -y iproute2")
	}
	id := os.Getpid() % 250
	h := &testHost{
		ns:       fmt.Sprintf("trireme-proxytest-%d", os.Getpid()),
		hostLink: fmt.Sprintf("tpx%dh", os.Getpid()%100000),
		IP:       fmt.Sprintf("10.251.%d.2", id),
	}
	peer := strings.TrimSuffix(h.hostLink, "h") + "n"
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	t.Cleanup(func() {
		_ = exec.Command("ip", "link", "del", h.hostLink).Run()
		_ = exec.Command("ip", "netns", "del", h.ns).Run()
	})
	run("netns", "add", h.ns)
	run("link", "add", h.hostLink, "type", "veth", "peer", "name", peer)
	run("link", "set", peer, "netns", h.ns)
	run("addr", "add", fmt.Sprintf("10.251.%d.1/30", id), "dev", h.hostLink)
	run("link", "set", h.hostLink, "up")
	run("-n", h.ns, "addr", "add", h.IP+"/30", "dev", peer)
	run("-n", h.ns, "link", "set", peer, "up")
	run("-n", h.ns, "link", "set", "lo", "up")
	return h
}

// Listen opens a TCP listener inside the namespace on the host's address.
// The socket belongs to the namespace it was made in, so it keeps serving
// there after this thread returns to ours.
func (h *testHost) Listen(t *testing.T) net.Listener {
	t.Helper()
	type result struct {
		ln  net.Listener
		err error
	}
	done := make(chan result, 1)
	go func() {
		// The thread is left locked, and so discarded, if it cannot return
		// to the original namespace.
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			done <- result{err: err}
			return
		}
		defer orig.Close()
		target, err := os.Open("/var/run/netns/" + h.ns)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- result{err: fmt.Errorf("enter %s: %w", h.ns, err)}
			return
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(h.IP, "0"))
		if unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		done <- result{ln, err}
	}()
	r := <-done
	if r.err != nil {
		t.Fatalf("listen in %s: %v", h.ns, r.err)
	}
	return r.ln
}
