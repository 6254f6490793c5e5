package proxy_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/netns"
	"trireme.dev/componentbase/testcluster"
	"trireme.dev/e2e/internal/imagefs"
)

const nodeName = "tpx-node"

func TestProxy(t *testing.T) {
	for i, mode := range []string{"nftables", "iptables"} {
		t.Run(mode, func(t *testing.T) {
			testMode(t, mode, subnet(i), "")
		})
	}
}

// TestImage runs the proxy from its image's file system (chrooted, in the
// node namespace), so nft, iptables-restore and conntrack are the copies
// the image carries, with only the libraries it carries.
func TestImage(t *testing.T) {
	root := imagefs.Unpack(t, "trireme-proxy")
	for i, mode := range []string{"nftables", "iptables"} {
		t.Run(mode, func(t *testing.T) {
			testMode(t, mode, subnet(2+i), root)
		})
	}
}

// testMode checks one back end. With root set, the proxy runs chrooted
// there (an unpacked image) instead of from _output/bin.
func testMode(t *testing.T, mode string, k int, root string) {
	ctx := context.Background()
	tag := mode[:3]
	if root != "" {
		tag += "i"
	}
	tp := newTopology(t, tag, k)
	for i := range tp.eps {
		tp.serve(t, i, 8080)
		tp.serveUDP(t, i, 5353)
	}
	cs := srv.Clientset(t)
	ns := "tpx-" + mode
	if root != "" {
		ns += "-image"
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })

	web := createService(t, cs, ns, "web", v1.ServiceTypeNodePort, nil)
	setEndpoints(t, cs, ns, "web", tp.epIPs...)
	empty := createService(t, cs, ns, "empty", v1.ServiceTypeNodePort, nil)
	sticky := createService(t, cs, ns, "sticky", v1.ServiceTypeClusterIP, func(s *v1.Service) {
		s.Spec.SessionAffinity = v1.ServiceAffinityClientIP
	})
	setEndpoints(t, cs, ns, "sticky", tp.epIPs...)
	dns := createService(t, cs, ns, "dns", v1.ServiceTypeClusterIP, func(s *v1.Service) {
		s.Spec.Ports = []v1.ServicePort{{Name: "dns", Port: 53, TargetPort: intstr.FromInt32(5353), Protocol: v1.ProtocolUDP}}
	})
	setUDPEndpoints(t, cs, ns, "dns", tp.epIPs...)

	lbLocal := func(s *v1.Service) {
		s.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
	}
	here := createService(t, cs, ns, "local-here", v1.ServiceTypeLoadBalancer, lbLocal)
	setEndpointsOn(t, cs, ns, "local-here", map[string]string{tp.epIPs[0]: nodeName})
	elsewhere := createService(t, cs, ns, "local-elsewhere", v1.ServiceTypeLoadBalancer, lbLocal)
	setEndpointsOn(t, cs, ns, "local-elsewhere", map[string]string{tp.epIPs[1]: "another-node"})

	proxy, log := startProxy(t, tp, mode, root)
	client := httpClient(tp.client)
	webURL := fmt.Sprintf("http://%s:80/", web.Spec.ClusterIP)
	nodePortURL := fmt.Sprintf("http://%s:%d/", tp.nodeIP, web.Spec.Ports[0].NodePort)

	waitFor(t, 30*time.Second, log, "ClusterIP to answer", func() bool {
		_, err := get(client, webURL)
		return err == nil
	})

	t.Run("ClusterIP and NodePort reach every endpoint", func(t *testing.T) {
		for _, url := range []string{webURL, nodePortURL} {
			counts := spread(t, client, url, 100)
			for _, ep := range tp.eps {
				if counts[ep] == 0 {
					t.Errorf("%s: endpoint %s got none of 100 requests: %v", url, ep, counts)
				}
			}
		}
	})

	t.Run("service without endpoints is refused at once", func(t *testing.T) {
		for _, addr := range []string{
			net.JoinHostPort(empty.Spec.ClusterIP, "80"),
			net.JoinHostPort(tp.nodeIP, fmt.Sprint(empty.Spec.Ports[0].NodePort)),
		} {
			start := time.Now()
			c, err := netns.Dialer(tp.client)(ctx, "tcp", addr)
			if err == nil {
				c.Close()
				t.Fatalf("%s: connected to a service without endpoints", addr)
			}
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("%s: %v, want connection refused", addr, err)
			}
			if took := time.Since(start); took > time.Second {
				t.Errorf("%s: refusal took %v", addr, took)
			}
		}
	})

	t.Run("a port the Service lacks is refused, not routed out", func(t *testing.T) {
		if mode != "nftables" {
			t.Skip("upstream's iptables mode has no such check either")
		}
		addr := net.JoinHostPort(web.Spec.ClusterIP, "81")
		c, err := netns.Dialer(tp.client)(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			t.Fatalf("%s: connected to a port the Service does not have", addr)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("%s: %v, want connection refused", addr, err)
		}
	})

	t.Run("ClientIP affinity keeps a client on one endpoint", func(t *testing.T) {
		counts := spread(t, client, fmt.Sprintf("http://%s:80/", sticky.Spec.ClusterIP), 30)
		if len(counts) != 1 {
			t.Errorf("requests spread over %v, want one endpoint", counts)
		}
	})

	t.Run("removed endpoint stops getting traffic", func(t *testing.T) {
		setEndpoints(t, cs, ns, "web", tp.epIPs[0])
		waitFor(t, 10*time.Second, log, "the removed endpoint to stop getting traffic", func() bool {
			counts := spread(t, client, webURL, 10)
			return counts[tp.eps[1]] == 0
		})
		if counts := spread(t, client, webURL, 50); counts[tp.eps[1]] != 0 {
			t.Errorf("removed endpoint still got traffic: %v", counts)
		}
		// Endpoints added back take effect too, from "no endpoints".
		setEndpoints(t, cs, ns, "empty", tp.epIPs[1])
		waitFor(t, 10*time.Second, log, "a service getting endpoints to answer", func() bool {
			body, err := get(client, fmt.Sprintf("http://%s:80/", empty.Spec.ClusterIP))
			return err == nil && body == tp.eps[1]
		})
	})

	t.Run("UDP reaches every endpoint and a removed one's flows move", func(t *testing.T) {
		addr := net.JoinHostPort(dns.Spec.ClusterIP, "53")
		counts := map[string]int{}
		for range 60 {
			// A new socket per datagram: a new flow, balanced anew.
			c := udpConn(t, tp.client, addr)
			counts[ask(c)]++
			c.Close()
		}
		for _, ep := range tp.eps {
			if counts[ep] == 0 {
				t.Fatalf("endpoint %s got none of 60 flows: %v", ep, counts)
			}
		}
		// One long-lived flow pinned to the endpoint about to go.
		var flow net.Conn
		for range 50 {
			c := udpConn(t, tp.client, addr)
			if ask(c) == tp.eps[1] {
				flow = c
				break
			}
			c.Close()
		}
		if flow == nil {
			t.Fatal("no flow reached the second endpoint")
		}
		setUDPEndpoints(t, cs, ns, "dns", tp.epIPs[0])
		// Without the conntrack cleanup the flow would keep going to the
		// removed endpoint for as long as it keeps sending.
		waitFor(t, 10*time.Second, log, "the flow to move to the remaining endpoint", func() bool {
			return ask(flow) == tp.eps[0]
		})
	})

	t.Run("externalTrafficPolicy Local answers only with a local endpoint", func(t *testing.T) {
		body, err := get(client, fmt.Sprintf("http://%s:%d/", tp.nodeIP, here.Spec.Ports[0].NodePort))
		if err != nil || body != tp.eps[0] {
			t.Errorf("NodePort with a local endpoint: %q, %v", body, err)
		}
		if body, err := get(client, fmt.Sprintf("http://%s:%d/", tp.nodeIP, elsewhere.Spec.Ports[0].NodePort)); err == nil {
			t.Errorf("NodePort without a local endpoint answered %q", body)
		}
		for _, c := range []struct {
			svc  *v1.Service
			want string
		}{{here, `"localEndpoints":1`}, {elsewhere, `"localEndpoints":0`}} {
			url := fmt.Sprintf("http://%s:%d/", tp.nodeIP, c.svc.Spec.HealthCheckNodePort)
			resp, err := client.Get(url)
			if err != nil {
				t.Errorf("health check port of %s: %v", c.svc.Name, err)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			wantCode := http.StatusOK
			if c.svc == elsewhere {
				wantCode = http.StatusServiceUnavailable
			}
			if resp.StatusCode != wantCode || !strings.Contains(string(b), c.want) {
				t.Errorf("health check port of %s: %d %s", c.svc.Name, resp.StatusCode, b)
			}
		}
	})

	t.Run("loadBalancerSourceRanges let only those clients reach the load-balancer IP", func(t *testing.T) {
		fenced := func(name, sourceRange, lbIP string) {
			svc := createService(t, cs, ns, name, v1.ServiceTypeLoadBalancer, func(s *v1.Service) {
				s.Spec.LoadBalancerSourceRanges = []string{sourceRange}
			})
			svc.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: lbIP}}
			if _, err := cs.CoreV1().Services(ns).UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			setEndpoints(t, cs, ns, name, tp.epIPs...)
		}
		// The refused one first: once the allowed one answers, the proxy
		// has seen both.
		denied, allowed := fmt.Sprintf("203.0.113.%d", 20+k), fmt.Sprintf("203.0.113.%d", 10+k)
		fenced("fenced-out", "198.51.100.0/24", denied)
		fenced("fenced-in", fmt.Sprintf("172.30.%d.2/32", k), allowed)
		quick := &http.Client{Timeout: time.Second, Transport: client.Transport}
		waitFor(t, 10*time.Second, log, "the load-balancer IP to answer a client in its source ranges", func() bool {
			_, err := get(quick, "http://"+allowed+":80/")
			return err == nil
		})
		// Dropped, so the dial times out (without rules for it, the node
		// would answer "unreachable" at once: it has no route there).
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		c, err := netns.Dialer(tp.client)(dctx, "tcp", net.JoinHostPort(denied, "80"))
		if err == nil {
			c.Close()
			t.Fatal("a client outside the source ranges connected")
		}
		if ne := net.Error(nil); !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &ne) && ne.Timeout()) {
			t.Errorf("client outside the source ranges: %v, want its packets dropped (a timeout)", err)
		}
	})

	t.Run("health and metrics", func(t *testing.T) {
		nodeClient := httpClient(tp.node)
		body, err := get(nodeClient, "http://127.0.0.1:10256/healthz")
		if err != nil || !strings.Contains(body, `"healthy":true`) {
			t.Errorf("healthz: %q, %v", body, err)
		}
		body, err = get(nodeClient, "http://127.0.0.1:10249/metrics")
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{"trireme_proxy_sync_duration_seconds_bucket", "trireme_proxy_rules_written_total", "trireme_proxy_last_successful_sync_timestamp_seconds"} {
			if !strings.Contains(body, m) {
				t.Errorf("metrics lack %s", m)
			}
		}
	})

	if err := proxy.Stop(10 * time.Second); err != nil {
		t.Logf("stop proxy: %v", err)
	}
	t.Run("cleanup leaves nothing", func(t *testing.T) {
		if left := tp.rulesLeft(t); left == "" {
			t.Fatalf("no rules found before --cleanup: the proxy wrote nothing?")
		}
		out, err := exec.Command("ip", proxyCommand(tp, root, "--cleanup")...).CombinedOutput()
		if err != nil {
			t.Fatalf("--cleanup: %v\n%s", err, out)
		}
		if left := tp.rulesLeft(t); left != "" {
			t.Errorf("left after --cleanup:\n%s", left)
		}
	})
	if t.Failed() {
		t.Logf("trireme-proxy log:\n%s", testcluster.Tail(log.String(), 60))
	}
}

// proxyCommand is the ip(8) command line running trireme-proxy with args
// in the node namespace, chrooted into root when it is set.
func proxyCommand(tp *topology, root string, args ...string) []string {
	if root != "" {
		return append([]string{"netns", "exec", tp.node, "chroot", root, "/usr/local/bin/trireme-proxy"}, args...)
	}
	bin, _ := testcluster.Binary("trireme-proxy")
	return append([]string{"netns", "exec", tp.node, bin}, args...)
}

func startProxy(t *testing.T, tp *topology, mode, root string) (*testcluster.Process, *testcluster.LogBuffer) {
	t.Helper()
	if _, err := testcluster.Binary("trireme-proxy"); err != nil {
		t.Fatal(err)
	}
	dir, inProc := t.TempDir(), ""
	if root != "" {
		dir, inProc = filepath.Join(root, "etc"), "/etc"
	}
	path := netns.RelayKubeconfig(t, tp.node, srv.KubeconfigPath(), srv.Port(), dir)
	if inProc != "" {
		path = filepath.Join(inProc, "kubeconfig")
	}
	log := &testcluster.LogBuffer{}
	proc, err := testcluster.StartProcess("ip", proxyCommand(tp, root,
		"--kubeconfig", path, "--hostname-override", nodeName, "--proxy-mode", mode,
		"--cluster-cidr", tp.podCIDR, "--min-sync-period", "100ms",
		"--healthz-bind-address", "127.0.0.1:10256", "--metrics-bind-address", "127.0.0.1:10249", "-v", "2"), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = proc.Stop(10 * time.Second)
		// Whatever happened, leave no rules behind in the namespace.
		_ = exec.Command("ip", proxyCommand(tp, root, "--cleanup")...).Run()
	})
	return proc, log
}

func createService(t *testing.T, cs kubernetes.Interface, ns, name string, typ v1.ServiceType, mutate func(*v1.Service)) *v1.Service {
	t.Helper()
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       v1.ServiceSpec{Type: typ, Ports: []v1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: v1.ProtocolTCP}}},
	}
	if mutate != nil {
		mutate(svc)
	}
	out, err := cs.CoreV1().Services(ns).Create(context.Background(), svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// setEndpoints makes the Service's one EndpointSlice list ips, ready.
func setEndpoints(t *testing.T, cs kubernetes.Interface, ns, svc string, ips ...string) {
	t.Helper()
	es := &discovery.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: svc + "-manual", Namespace: ns, Labels: map[string]string{discovery.LabelServiceName: svc}},
		AddressType: discovery.AddressTypeIPv4,
		Ports:       []discovery.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(v1.ProtocolTCP)}},
	}
	for _, ip := range ips {
		es.Endpoints = append(es.Endpoints, discovery.Endpoint{Addresses: []string{ip}, Conditions: discovery.EndpointConditions{Ready: ptr.To(true)}})
	}
	applySlice(t, cs, es)
}

// applySlice creates or replaces es.
func applySlice(t *testing.T, cs kubernetes.Interface, es *discovery.EndpointSlice) {
	t.Helper()
	ctx, ns := context.Background(), es.Namespace
	cur, err := cs.DiscoveryV1().EndpointSlices(ns).Get(ctx, es.Name, metav1.GetOptions{})
	if err == nil {
		es.ResourceVersion = cur.ResourceVersion
		_, err = cs.DiscoveryV1().EndpointSlices(ns).Update(ctx, es, metav1.UpdateOptions{})
	} else {
		_, err = cs.DiscoveryV1().EndpointSlices(ns).Create(ctx, es, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// setEndpointsOn makes the Service's one EndpointSlice list the IPs in
// nodes, each on the node named.
func setEndpointsOn(t *testing.T, cs kubernetes.Interface, ns, svc string, nodes map[string]string) {
	t.Helper()
	es := &discovery.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: svc + "-manual", Namespace: ns, Labels: map[string]string{discovery.LabelServiceName: svc}},
		AddressType: discovery.AddressTypeIPv4,
		Ports:       []discovery.EndpointPort{{Name: ptr.To("http"), Port: ptr.To[int32](8080), Protocol: ptr.To(v1.ProtocolTCP)}},
	}
	for ip, node := range nodes {
		es.Endpoints = append(es.Endpoints, discovery.Endpoint{Addresses: []string{ip}, NodeName: ptr.To(node), Conditions: discovery.EndpointConditions{Ready: ptr.To(true)}})
	}
	applySlice(t, cs, es)
}

// setUDPEndpoints makes the UDP Service's one EndpointSlice list ips.
func setUDPEndpoints(t *testing.T, cs kubernetes.Interface, ns, svc string, ips ...string) {
	t.Helper()
	es := &discovery.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: svc + "-manual", Namespace: ns, Labels: map[string]string{discovery.LabelServiceName: svc}},
		AddressType: discovery.AddressTypeIPv4,
		Ports:       []discovery.EndpointPort{{Name: ptr.To("dns"), Port: ptr.To[int32](5353), Protocol: ptr.To(v1.ProtocolUDP)}},
	}
	for _, ip := range ips {
		es.Endpoints = append(es.Endpoints, discovery.Endpoint{Addresses: []string{ip}, Conditions: discovery.EndpointConditions{Ready: ptr.To(true)}})
	}
	applySlice(t, cs, es)
}

// httpClient sends every request on a new connection from namespace ns.
func httpClient(ns string) *http.Client {
	return &http.Client{
		Timeout:   3 * time.Second,
		Transport: &http.Transport{DialContext: netns.Dialer(ns), DisableKeepAlives: true},
	}
}

func get(c *http.Client, url string) (string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", url, resp.Status)
	}
	return strings.TrimSpace(string(b)), nil
}

// spread sends n requests and counts the answers per endpoint.
func spread(t *testing.T, c *http.Client, url string, n int) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for range n {
		body, err := get(c, url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		counts[body]++
	}
	return counts
}

func waitFor(t *testing.T, timeout time.Duration, log *testcluster.LogBuffer, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; proxy log:\n%s", timeout, what, testcluster.Tail(log.String(), 40))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// subnet picks the third octet of a test's subnets: one of six per test
// binary, from its PID, so concurrent runs rarely share one; at most 229,
// as tests add 20 to it for host addresses.
func subnet(i int) int { return 20 + (os.Getpid()%35)*6 + i }
