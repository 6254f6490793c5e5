package proxy_test

import (
	"trireme.dev/componentbase/netns"

	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"trireme.dev/componentbase/testcluster"
)

// topology is one node with two endpoint "pods" and a client, each a
// network namespace of its own:
//
//	client 172.30.K.2 ── 172.30.K.1 [node] br0 172.31.K.1 ── ep1 172.31.K.11
//	                                                     └── ep2 172.31.K.12
//
// The node routes between them; the proxy runs in it. Nothing is added to
// the host's own namespace.
type topology struct {
	prefix          string
	node, client    string
	eps             []string
	podCIDR, nodeIP string
	epIPs           []string
}

func newTopology(t *testing.T, tag string, k int) *topology {
	t.Helper()
	for _, bin := range []string{"ip", "nft", "iptables-restore", "conntrack", "busybox"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s not found: apt-get install -y iproute2 nftables iptables conntrack busybox-static", bin)
		}
	}
	p := fmt.Sprintf("tpx%d%s", os.Getpid()%100000, tag)
	tp := &topology{
		prefix: p, node: p + "-node", client: p + "-client",
		eps:     []string{p + "-ep1", p + "-ep2"},
		podCIDR: fmt.Sprintf("172.31.%d.0/24", k), nodeIP: fmt.Sprintf("172.30.%d.1", k),
		epIPs: []string{fmt.Sprintf("172.31.%d.11", k), fmt.Sprintf("172.31.%d.12", k)},
	}
	all := append([]string{tp.node, tp.client}, tp.eps...)
	for _, ns := range all {
		netns.IP(t, "netns", "add", ns)
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
		netns.IP(t, "-n", ns, "link", "set", "lo", "up")
	}
	n := tp.node
	// Redirects back to the client (the node's default router below) would
	// use up the ICMP rate limit that the proxy's rejects need.
	netns.IP(t, "netns", "exec", n, "sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv4.conf.all.send_redirects=0", "net.ipv4.conf.default.send_redirects=0")
	netns.IP(t, "-n", n, "link", "add", "br0", "type", "bridge")
	netns.IP(t, "-n", n, "addr", "add", fmt.Sprintf("172.31.%d.1/24", k), "dev", "br0")
	netns.IP(t, "-n", n, "link", "set", "br0", "up")
	for i, ep := range tp.eps {
		veth := fmt.Sprintf("veth-ep%d", i+1)
		netns.IP(t, "-n", n, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ep)
		netns.IP(t, "-n", n, "link", "set", veth, "master", "br0", "up")
		netns.IP(t, "-n", ep, "addr", "add", tp.epIPs[i]+"/24", "dev", "eth0")
		netns.IP(t, "-n", ep, "link", "set", "eth0", "up")
		netns.IP(t, "-n", ep, "route", "add", "default", "via", fmt.Sprintf("172.31.%d.1", k))
	}
	netns.IP(t, "-n", n, "link", "add", "veth-client", "type", "veth", "peer", "name", "eth0", "netns", tp.client)
	netns.IP(t, "-n", n, "addr", "add", tp.nodeIP+"/24", "dev", "veth-client")
	netns.IP(t, "-n", n, "link", "set", "veth-client", "up")
	netns.IP(t, "-n", tp.client, "addr", "add", fmt.Sprintf("172.30.%d.2/24", k), "dev", "eth0")
	netns.IP(t, "-n", tp.client, "link", "set", "eth0", "up")
	netns.IP(t, "-n", tp.client, "route", "add", "default", "via", tp.nodeIP)
	// A real node has a default route, so a packet to a Service without
	// endpoints reaches the forward hook, where the proxy rejects it; the
	// client (which forwards nothing) stands in for the upstream router.
	netns.IP(t, "-n", n, "route", "add", "default", "via", fmt.Sprintf("172.30.%d.2", k))
	return tp
}

// serve runs busybox httpd in endpoint namespace i on port, answering
// every request with the endpoint's name, and a UDP echo of the name.
func (tp *topology) serve(t *testing.T, i int, port int) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(tp.eps[i]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	proc, err := testcluster.StartProcess("ip", []string{"netns", "exec", tp.eps[i], "busybox", "httpd", "-f", "-p", fmt.Sprint(port), "-h", dir}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proc.Stop(5 * time.Second) })
}

// rulesLeft lists what of the proxy is still in the node namespace.
func (tp *topology) rulesLeft(t *testing.T) string {
	t.Helper()
	var left []string
	out, _ := exec.Command("ip", "netns", "exec", tp.node, "nft", "list", "tables").CombinedOutput()
	if strings.Contains(string(out), "trireme-proxy") {
		left = append(left, "nftables table trireme-proxy")
	}
	out, _ = exec.Command("ip", "netns", "exec", tp.node, "iptables-save").CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "TRIREME") {
			left = append(left, l)
		}
	}
	return strings.Join(left, "\n")
}
