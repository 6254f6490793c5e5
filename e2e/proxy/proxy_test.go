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
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"trireme.dev/e2e/framework"
)

const nodeName = "tpx-node"

func TestProxy(t *testing.T) {
	for i, mode := range []string{"nftables", "iptables"} {
		t.Run(mode, func(t *testing.T) {
			testMode(t, mode, 20+(os.Getpid()%100)*2+i)
		})
	}
}

// lockedBuffer is the proxy's log.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func testMode(t *testing.T, mode string, k int) {
	ctx := context.Background()
	tp := newTopology(t, mode[:3], k)
	for i := range tp.eps {
		tp.serve(t, i, 8080)
	}
	cs := srv.Clientset(t)
	ns := "tpx-" + mode
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

	proxy, log := startProxy(t, tp, mode)
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
			c, err := dialer(tp.client)(ctx, "tcp", addr)
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
		bin, _ := framework.Binary("trireme-proxy")
		out, err := exec.Command("ip", "netns", "exec", tp.node, bin, "--cleanup").CombinedOutput()
		if err != nil {
			t.Fatalf("--cleanup: %v\n%s", err, out)
		}
		if left := tp.rulesLeft(t); left != "" {
			t.Errorf("left after --cleanup:\n%s", left)
		}
	})
	if t.Failed() {
		t.Logf("trireme-proxy log:\n%s", tail(log.String(), 60))
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func startProxy(t *testing.T, tp *topology, mode string) (*framework.Process, *lockedBuffer) {
	t.Helper()
	bin, err := framework.Binary("trireme-proxy")
	if err != nil {
		t.Fatal(err)
	}
	addr := relay(t, tp.node, fmt.Sprintf("127.0.0.1:%d", srv.Port()))
	kc, err := clientcmd.LoadFromFile(srv.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range kc.Clusters {
		c.Server = "https://" + addr
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	log := &lockedBuffer{}
	proc, err := framework.StartProcess("ip", []string{"netns", "exec", tp.node, bin,
		"--kubeconfig", path, "--hostname-override", nodeName, "--proxy-mode", mode,
		"--cluster-cidr", tp.podCIDR, "--min-sync-period", "100ms",
		"--healthz-bind-address", "127.0.0.1:10256", "--metrics-bind-address", "127.0.0.1:10249", "-v", "2"}, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = proc.Stop(10 * time.Second)
		// Whatever happened, leave no rules behind in the namespace.
		_ = exec.Command("ip", "netns", "exec", tp.node, bin, "--cleanup").Run()
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
	ctx := context.Background()
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

// httpClient sends every request on a new connection from namespace ns.
func httpClient(ns string) *http.Client {
	return &http.Client{
		Timeout:   3 * time.Second,
		Transport: &http.Transport{DialContext: dialer(ns), DisableKeepAlives: true},
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

func waitFor(t *testing.T, timeout time.Duration, log *lockedBuffer, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s; proxy log:\n%s", timeout, what, tail(log.String(), 40))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
