package cloudcontrollermanager_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/netns"
	"trireme.dev/componentbase/testcluster"
	"trireme.dev/e2e/internal/netnsnode"

	"trireme.dev/componentbase/testwait"
)

// lbNode is a node of the announcement test: a network namespace on the
// test's switch, where trireme-vip loadbalancer runs and busybox httpd on
// port 8080 answers with the node's name, standing in for its pods.
type lbNode struct {
	name, netns, port string
	ip, ip6           netip.Addr
	announcer         *testcluster.Process
	log               *testcluster.LogBuffer
}

// failoverLimit is the bound on an address's move after its node
// died: the 4 s Lease, and a second to notice and announce.
const failoverLimit = 6 * time.Second

// lbTopology is a layer-2 network of node namespaces: a switch (a bridge
// in a namespace of its own) with the host's veth on it, n nodes, each
// Registered, running an announcer and httpd, and the CCM with a pool of
// the switch's subnet.
type lbTopology struct {
	srv   *testcluster.APIServer
	cs    kubernetes.Interface
	sw    *netnsnode.Switch
	nodes map[string]*lbNode
	names []string
	ccm   *ccm
	vip   string
	// client reaches the addresses from the host.
	client *http.Client
}

// newLBTopology builds it with n nodes and a pool of size addresses;
// ccmArgs are extra flags of the CCM.
func newLBTopology(tb testing.TB, n, size int, ccmArgs ...string) *lbTopology {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Fatal("network namespaces need root")
	}
	for _, bin := range []string{"ip", "busybox"} {
		if _, err := exec.LookPath(bin); err != nil {
			tb.Fatalf("%s not found: apt-get install -y iproute2 busybox-static", bin)
		}
	}
	vipBin, err := testcluster.Binary("trireme-vip")
	if err != nil {
		tb.Fatal(err)
	}
	// Dual-stack Service ranges, so that a Service can ask for an IPv6
	// address too.
	srv := testcluster.StartAPIServer(tb, testcluster.APIServerOptions{ServiceClusterIPRange: "10.96.0.0/16,fd96::/108"})
	tp := &lbTopology{srv: srv, cs: srv.Clientset(tb), nodes: map[string]*lbNode{}, vip: vipBin,
		client: &http.Client{Timeout: 300 * time.Millisecond}}
	installCRD(tb, srv)

	// 198.18.0.0/15 (RFC 2544, benchmarking): never a real LAN's. A /22
	// per run: nodes from .0.11, the pool from .1.0.
	base := netip.AddrFrom4([4]byte{198, 18, byte(4 * (os.Getpid() % 64)), 0})
	at := func(i int) netip.Addr {
		b := base.As4()
		b[2] += byte(i / 256)
		b[3] = byte(i % 256)
		return netip.AddrFrom4(b)
	}
	// The same layout in a unique-local /64 (RFC 4193): nodes from ::11,
	// the pool's 16 IPv6 addresses from ::100.
	at6 := func(i int) netip.Addr {
		b := netip.MustParseAddr("fd98:18::").As16()
		b[5] = byte(os.Getpid() % 64)
		b[14], b[15] = byte(i/256), byte(i%256)
		return netip.AddrFrom16(b)
	}
	config := filepath.Join(tb.TempDir(), "cloud.yaml")
	if err := os.WriteFile(config, fmt.Appendf(nil, `apiVersion: cloudconfig.config.trireme.dev/v1alpha1
kind: CloudConfiguration
loadBalancer:
  pools:
  - name: default
    addresses: ["%s-%s", "%s-%s"]
`, at(256), at(256+size-1), at6(256), at6(256+15)), 0o600); err != nil {
		tb.Fatal(err)
	}
	p := fmt.Sprintf("lba%d", os.Getpid()%100000)
	tp.sw = &netnsnode.Switch{Netns: p + "-sw", Bridge: "br0", HostIface: p + "-h", HostPort: "host",
		HostAddr: netip.PrefixFrom(at(1), 22)}
	tp.sw.Delete()
	if err := tp.sw.Create(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(tp.sw.Delete)
	netns.IP(tb, "addr", "add", netip.PrefixFrom(at6(1), 64).String(), "dev", tp.sw.HostIface, "nodad")
	for i := 1; i <= n; i++ {
		nd := &lbNode{name: fmt.Sprintf("lb-node-%d", i), netns: fmt.Sprintf("%s-n%d", p, i), port: fmt.Sprintf("n%d", i), ip: at(10 + i), ip6: at6(10 + i)}
		tp.nodes[nd.name], tp.names = nd, append(tp.names, nd.name)
		netns.IP(tb, "netns", "add", nd.netns)
		tb.Cleanup(func() { _ = exec.Command("ip", "netns", "del", nd.netns).Run() })
		netns.IP(tb, "-n", nd.netns, "link", "set", "lo", "up")
		netns.IP(tb, "-n", tp.sw.Netns, "link", "add", nd.port, "type", "veth", "peer", "name", "eth0", "netns", nd.netns)
		netns.IP(tb, "-n", tp.sw.Netns, "link", "set", nd.port, "master", tp.sw.Bridge, "up")
		netns.IP(tb, "-n", nd.netns, "addr", "add", nd.ip.String()+"/22", "dev", "eth0")
		netns.IP(tb, "-n", nd.netns, "addr", "add", nd.ip6.String()+"/64", "dev", "eth0", "nodad")
		netns.IP(tb, "-n", nd.netns, "link", "set", "eth0", "up")
		registerNode(tb, tp.cs, nd.name, nd.ip.String(), nil, true)
		serveName(tb, nd)
		nd.start(tb, vipBin, srv)
	}
	tp.ccm = startCCM(tb, srv, config, ccmArgs...)
	tb.Cleanup(func() {
		if tb.Failed() {
			for _, name := range tp.names {
				tb.Logf("%s announcer log:\n%s", name, tp.nodes[name].log.Tail(40))
			}
		}
	})
	return tp
}

// answer is which node answers http://ip:8080/ from the host, "" if none.
func (tp *lbTopology) answer(ip string) string {
	resp, err := tp.client.Get("http://" + net.JoinHostPort(ip, "8080") + "/")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.TrimSpace(string(b))
}

// held maps every host address (/32, /128) on a node's eth0, the
// announced ones, to the nodes holding it.
func (tp *lbTopology) held() map[string][]string {
	out := map[string][]string{}
	for _, name := range tp.names {
		o, _ := exec.Command("ip", "-n", tp.nodes[name].netns, "-o", "addr", "show", "dev", "eth0").CombinedOutput()
		for _, f := range strings.Fields(string(o)) {
			ip, ok := strings.CutSuffix(f, "/32")
			if !ok {
				ip, ok = strings.CutSuffix(f, "/128")
			}
			if ok {
				out[ip] = append(out[ip], name)
			}
		}
	}
	return out
}

func (tp *lbTopology) holders(ip string) []string { return tp.held()[ip] }

// kill makes node a dead machine: its announcer gone without a word, its
// link cut.
func (tp *lbTopology) kill(tb testing.TB, node string) {
	tb.Helper()
	if err := tp.nodes[node].announcer.Kill(); err != nil {
		tb.Log(err)
	}
	netns.IP(tb, "-n", tp.sw.Netns, "link", "set", tp.nodes[node].port, "down")
}

// TestAnnouncement runs the CCM and three nodes' announcers; the host
// reaches each LoadBalancer address over the nodes' layer-2 network (its
// ARP resolved by the owner's announcements), the address moves when its
// node dies, externalTrafficPolicy: Local keeps it on a node with an
// endpoint, and a dual-stack Service's IPv6 address does the same through
// unsolicited Neighbor Advertisements.
func TestAnnouncement(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an apiserver and network namespaces")
	}
	tp := newLBTopology(t, 3, 8)
	cs := tp.cs
	outer := t
	svc := createLBService(t, cs, "web", corev1.ServiceExternalTrafficPolicyCluster)
	ip := waitForIngress(t, cs, svc)

	var owner string
	t.Run("the host reaches the address on the node that owns it", func(t *testing.T) {
		testwait.For(t, timeout, "an answer from "+ip, func(context.Context) (bool, error) {
			owner = tp.answer(ip)
			return owner != "", fmt.Errorf("no answer")
		})
		if got := tp.holders(ip); len(got) != 1 || got[0] != owner {
			t.Fatalf("%s answered from %s, held by %v", ip, owner, got)
		}
	})

	t.Run("the address moves when its node dies", func(t *testing.T) {
		if owner == "" {
			t.Skip("no owner")
		}
		tp.failover(t, outer, ip, owner)
	})

	t.Run("externalTrafficPolicy Local: only a node with a ready endpoint", func(t *testing.T) {
		local := createLBService(t, cs, "local", corev1.ServiceExternalTrafficPolicyLocal)
		lip := waitForIngress(t, cs, local)
		if got := tp.holders(lip); len(got) != 0 {
			t.Fatalf("%s held by %v without an endpoint", lip, got)
		}
		for _, name := range []string{"lb-node-3", "lb-node-1"} {
			setLocalEndpoint(t, cs, local, name, tp.nodes[name].ip.String())
			testwait.For(t, timeout, lip+" answered by "+name, func(context.Context) (bool, error) {
				got := tp.holders(lip)
				return len(got) == 1 && got[0] == name && tp.answer(lip) == name, fmt.Errorf("held by %v", got)
			})
		}
	})

	t.Run("dual stack: the IPv6 address answers and moves, announced by Neighbor Advertisement", func(t *testing.T) {
		dual := createLBService(t, cs, "dual", corev1.ServiceExternalTrafficPolicyCluster, corev1.IPv4Protocol, corev1.IPv6Protocol)
		ips := waitForIngresses(t, cs, dual, 2)
		owners := map[string]string{}
		for _, ip := range ips {
			testwait.For(t, timeout, "an answer from "+ip, func(context.Context) (bool, error) {
				owners[ip] = tp.answer(ip)
				return owners[ip] != "", fmt.Errorf("no answer")
			})
			if got := tp.holders(ip); len(got) != 1 || got[0] != owners[ip] {
				t.Fatalf("%s answered from %s, held by %v", ip, owners[ip], got)
			}
		}
		i := slices.IndexFunc(ips, func(ip string) bool { return strings.Contains(ip, ":") })
		if len(ips) != 2 || i < 0 {
			t.Fatalf("addresses %v: want one IPv4 and one IPv6", ips)
		}
		v6 := ips[i]
		tp.failover(t, outer, v6, owners[v6])
	})
}

// failover kills ip's owner and checks that another node answers for ip
// within failoverLimit; then the owner comes back, its announcer started
// for outer (the rest of the test), and ip returns to it (the hash
// prefers it again).
func (tp *lbTopology) failover(t, outer testing.TB, ip, owner string) {
	t.Helper()
	start := time.Now()
	tp.kill(t, owner)
	var now string
	testwait.For(t, timeout, ip+" answered by another node", func(context.Context) (bool, error) {
		now = tp.answer(ip)
		return now != "" && now != owner, fmt.Errorf("answered by %q", now)
	})
	took := time.Since(start)
	t.Logf("%s moved from %s to %s in %s", ip, owner, now, took.Round(10*time.Millisecond))
	if took > failoverLimit+time.Second { // a poll's slack
		t.Errorf("failover took %s, more than %s", took, failoverLimit)
	}
	netns.IP(t, "-n", tp.sw.Netns, "link", "set", tp.nodes[owner].port, "up")
	tp.nodes[owner].start(outer, tp.vip, tp.srv)
	testwait.For(t, timeout, ip+" back on "+owner, func(context.Context) (bool, error) {
		got := tp.holders(ip)
		return len(got) == 1 && got[0] == owner && tp.answer(ip) == owner, fmt.Errorf("held by %v", got)
	})
}

// start runs n's announcer, reaching the apiserver through a relay in its
// namespace, with the control-plane VIP's Lease timings (its defaults).
func (n *lbNode) start(t testing.TB, bin string, srv *testcluster.APIServer) {
	t.Helper()
	kc := netns.RelayKubeconfig(t, n.netns, srv.KubeconfigPath(), srv.Port(), t.TempDir())
	n.log = &testcluster.LogBuffer{}
	proc, err := testcluster.StartProcess("ip", []string{"netns", "exec", n.netns, bin, "loadbalancer",
		"--node-name", n.name, "--node-ip", n.ip.String(), "--kubeconfig", kc, "--bind-address", "",
		"--log-format", "text"}, n.log)
	if err != nil {
		t.Fatal(err)
	}
	n.announcer = proc
	t.Cleanup(func() { _ = proc.Stop(10 * time.Second) })
}

// serveName runs busybox httpd on port 8080 of n's namespace, answering
// with n's name.
func serveName(t testing.TB, n *lbNode) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(n.name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	proc, err := testcluster.StartProcess("ip", []string{"netns", "exec", n.netns, "busybox", "httpd", "-f", "-p", "8080", "-h", dir}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proc.Stop(5 * time.Second) })
}

// createLBService makes a LoadBalancer Service on port 8080; with two
// families it requires both.
func createLBService(t testing.TB, cs kubernetes.Interface, name string, policy corev1.ServiceExternalTrafficPolicy, families ...corev1.IPFamily) *corev1.Service {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ExternalTrafficPolicy: policy,
			Selector: map[string]string{"app": name}, IPFamilies: families,
			Ports: []corev1.ServicePort{{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}},
	}
	if len(families) > 1 {
		svc.Spec.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyRequireDualStack)
	}
	svc, err := cs.CoreV1().Services("default").Create(context.Background(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func waitForIngress(t testing.TB, cs kubernetes.Interface, svc *corev1.Service) string {
	t.Helper()
	return waitForIngresses(t, cs, svc, 1)[0]
}

// waitForIngresses waits for n addresses in svc's status and returns them
// in its order.
func waitForIngresses(t testing.TB, cs kubernetes.Interface, svc *corev1.Service, n int) []string {
	t.Helper()
	var ips []string
	testwait.For(t, timeout, svc.Name+"'s addresses", func(ctx context.Context) (bool, error) {
		got, err := cs.CoreV1().Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ips = ips[:0]
		for _, in := range got.Status.LoadBalancer.Ingress {
			ips = append(ips, in.IP)
		}
		return len(ips) >= n, fmt.Errorf("%d of %d addresses", len(ips), n)
	})
	return ips
}

// setLocalEndpoint makes svc's one ready endpoint the "pod" of node.
func setLocalEndpoint(t testing.TB, cs kubernetes.Interface, svc *corev1.Service, node, ip string) {
	t.Helper()
	es := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: svc.Name + "-1", Namespace: svc.Namespace,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{ip}, NodeName: ptr.To(node),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	slices := cs.DiscoveryV1().EndpointSlices(svc.Namespace)
	old, err := slices.Get(context.Background(), es.Name, metav1.GetOptions{})
	if err == nil {
		es.ResourceVersion = old.ResourceVersion
		_, err = slices.Update(context.Background(), es, metav1.UpdateOptions{})
	} else {
		_, err = slices.Create(context.Background(), es, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}
