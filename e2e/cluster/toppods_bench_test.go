package cluster

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"trireme.dev/componentbase/testpki"
)

// The scale of BenchmarkTopPods: issue 20 asks `kubectl top pods -A` to answer
// within a second with 500 pods.
const (
	topBenchNodes       = 10
	topBenchPodsPerNode = 50
	topBenchNamespace   = "bench-top"
	// topBenchPort is where the fake kubelets listen, on the host's node IP.
	topBenchPort = 10350
)

// BenchmarkTopPods times `kubectl top pods -A` (kubectl's discovery and list
// through the aggregator to metrics-server) with 500 pods reporting metrics.
// Real pods cost a containerd shim each, more than this machine has for 500,
// so the pods are API objects bound to fake nodes whose "kubelets" are one
// HTTPS server of this test: it serves each node's resource metrics, with a
// certificate the cluster CA signed, at the path the node's
// metrics.k8s.io/resource-metrics-path annotation names. metrics-server
// scrapes them as it scrapes real kubelets; everything from metrics-server to
// kubectl is the real thing. The test stands in for the fake nodes' kubelets
// where metrics-server looks: it keeps the nodes Ready (their Leases renewed,
// as a kubelet's heartbeat) and marks the pods Running, since metrics-server
// scrapes only Ready nodes and serves only Running pods.
//
//	make bench-cluster (or: TRIREME_E2E_CLUSTER=1 go test -run '^$' -bench TopPods -benchtime 10x ./e2e/cluster/)
func BenchmarkTopPods(b *testing.B) {
	srv, err := startFakeKubelets(time.Now())
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	defer func() {
		_, _ = kubectl("delete", "namespace", topBenchNamespace, "--wait=false")
		_, _ = kubectl("delete", "nodes", "-l", "trireme.dev/fake=true", "--wait=false")
		_, _ = kubectl("delete", "leases", "-n", "kube-node-lease", "-l", "trireme.dev/fake=true", "--wait=false")
	}()
	stopHeartbeat, err := fakeNodes()
	if err != nil {
		b.Fatal(err)
	}
	defer stopHeartbeat()
	if err := runningFakePods(); err != nil {
		b.Fatal(err)
	}
	want := topBenchNodes * topBenchPodsPerNode
	start := time.Now()
	deadline := start.Add(3 * time.Minute)
	for {
		out, err := kubectl("top", "pods", "-n", topBenchNamespace, "--no-headers")
		got := strings.Count(out, "\n")
		if err == nil && got >= want {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("metrics for %d of %d pods after 3m: %v", got, want, err)
		}
		time.Sleep(2 * time.Second)
	}
	fmt.Printf("e2e/cluster: metrics for the %d fake pods after %s\n", want, time.Since(start).Round(100*time.Millisecond))
	all, err := kubectl("get", "pods", "-A", "--no-headers")
	if err != nil {
		b.Fatal(err)
	}
	total := strings.Count(all, "\n")
	b.Run(fmt.Sprintf("pods=%d", total), func(b *testing.B) {
		var worst time.Duration
		for b.Loop() {
			start := time.Now()
			out, err := kubectl("top", "pods", "-A", "--no-headers")
			if err != nil {
				b.Fatal(err)
			}
			worst = max(worst, time.Since(start))
			if n := strings.Count(out, "\n"); n < want {
				b.Fatalf("kubectl top pods -A listed %d pods, want at least %d", n, want)
			}
		}
		b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
		fmt.Printf("e2e/cluster: kubectl top pods -A with %d pods: %s per call, worst %s\n",
			total, (b.Elapsed() / time.Duration(b.N)).Round(time.Millisecond), worst.Round(time.Millisecond))
	})
}

// fakeNodes creates the fake nodes, Ready, with their kubelet endpoint on the
// fake kubelets' port, and renews their Leases every 10 s until the returned
// stop is called, so that the node lifecycle controller keeps them Ready.
func fakeNodes() (stop func(), err error) {
	var nodes strings.Builder
	for n := range topBenchNodes {
		fmt.Fprintf(&nodes, `---
apiVersion: v1
kind: Node
metadata:
  name: bench-top-%d
  labels: {trireme.dev/fake: "true"}
  annotations: {metrics.k8s.io/resource-metrics-path: /metrics/nodes/bench-top-%d/metrics/resource}
spec:
  taints: [{key: trireme.dev/fake, effect: NoSchedule}]
`, n, n)
	}
	if out, err := kubectlStdin(nodes.String(), "create", "-f", "-"); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, out)
	}
	if err := renewFakeLeases(); err != nil {
		return nil, err
	}
	now := time.Now().UTC().Format(time.RFC3339)
	status := fmt.Sprintf(`{"status":{"addresses":[{"type":"InternalIP","address":%q}],"daemonEndpoints":{"kubeletEndpoint":{"Port":%d}},`+
		`"conditions":[{"type":"Ready","status":"True","reason":"KubeletReady","message":"fake kubelet of BenchmarkTopPods","lastHeartbeatTime":%q,"lastTransitionTime":%q}]}}`,
		nodeIP, topBenchPort, now, now)
	for n := range topBenchNodes {
		if out, err := kubectl("patch", "node", fmt.Sprintf("bench-top-%d", n), "--subresource=status", "--type=merge", "-p", status); err != nil {
			return nil, fmt.Errorf("%w\n%s", err, out)
		}
	}
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := renewFakeLeases(); err != nil {
					fmt.Printf("e2e/cluster: renew the fake nodes' leases: %v\n", err)
				}
			}
		}
	}()
	return func() { close(done); <-ended }, nil
}

// renewFakeLeases writes the fake nodes' Leases with the time now, as a
// kubelet's heartbeat does.
func renewFakeLeases() error {
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
	var leases strings.Builder
	for n := range topBenchNodes {
		fmt.Fprintf(&leases, `---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: bench-top-%[1]d, namespace: kube-node-lease, labels: {trireme.dev/fake: "true"}}
spec: {holderIdentity: bench-top-%[1]d, leaseDurationSeconds: 40, renewTime: %[2]q}
`, n, now)
	}
	if out, err := kubectlStdin(leases.String(), "apply", "--server-side", "--force-conflicts", "--field-manager=bench-top", "-f", "-"); err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	return nil
}

// runningFakePods creates the fake nodes' pods and marks them Running and
// Ready, as their kubelets would, eight status patches at a time.
func runningFakePods() error {
	if out, err := kubectl("create", "namespace", topBenchNamespace); err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	var pods strings.Builder
	for n := range topBenchNodes {
		for p := range topBenchPodsPerNode {
			fmt.Fprintf(&pods, `---
apiVersion: v1
kind: Pod
metadata: {name: p-%d-%d, namespace: %s}
spec:
  nodeName: bench-top-%d
  tolerations: [{operator: Exists}]
  containers: [{name: main, image: trireme.dev/pause:fake}]
`, n, p, topBenchNamespace, n)
		}
	}
	if out, err := kubectlStdin(pods.String(), "create", "-f", "-"); err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	status := fmt.Sprintf(`{"status":{"phase":"Running","startTime":%q,"conditions":[{"type":"Ready","status":"True","lastTransitionTime":%q}]}}`, now, now)
	names := make(chan string)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range 8 {
		wg.Go(func() {
			for name := range names {
				if out, err := kubectl("patch", "pod", "-n", topBenchNamespace, name, "--subresource=status", "--type=merge", "-p", status); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("%w\n%s", err, out))
					mu.Unlock()
				}
			}
		})
	}
	for n := range topBenchNodes {
		for p := range topBenchPodsPerNode {
			names <- fmt.Sprintf("p-%d-%d", n, p)
		}
	}
	close(names)
	wg.Wait()
	return errors.Join(errs...)
}

// startFakeKubelets serves /metrics/nodes/<node>/metrics/resource for the
// fake nodes: each pod's one container uses a steady 10m of CPU from start on
// and 8 MiB of memory.
func startFakeKubelets(start time.Time) (*http.Server, error) {
	cert, err := fakeKubeletCert()
	if err != nil {
		return nil, err
	}
	ln, err := tls.Listen("tcp", net.JoinHostPort(nodeIP, fmt.Sprint(topBenchPort)), &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		return nil, fmt.Errorf("listen for the fake kubelets: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics/nodes/{node}/metrics/resource", func(w http.ResponseWriter, r *http.Request) {
		node := r.PathValue("node")
		var n int
		if _, err := fmt.Sscanf(node, "bench-top-%d", &n); err != nil {
			http.NotFound(w, r)
			return
		}
		now := time.Now()
		cpu := now.Sub(start).Seconds() * 0.01
		ts := now.UnixMilli()
		fmt.Fprintf(w, "node_cpu_usage_seconds_total %g %d\n", cpu*topBenchPodsPerNode, ts)
		fmt.Fprintf(w, "node_memory_working_set_bytes %d %d\n", topBenchPodsPerNode*8<<20, ts)
		for p := range topBenchPodsPerNode {
			labels := fmt.Sprintf(`{container="main",namespace=%q,pod="p-%d-%d"}`, topBenchNamespace, n, p)
			fmt.Fprintf(w, "container_cpu_usage_seconds_total%s %g %d\n", labels, cpu, ts)
			fmt.Fprintf(w, "container_memory_working_set_bytes%s %d %d\n", labels, 8<<20, ts)
			fmt.Fprintf(w, "container_start_time_seconds%s %d %d\n", labels, start.Unix(), ts)
		}
		fmt.Fprintf(w, "scrape_error 0\n")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return srv, nil
}

// fakeKubeletCert is a serving certificate for the node IP signed by the
// cluster CA, which metrics-server verifies kubelets against.
func fakeKubeletCert() (tls.Certificate, error) {
	pki := filepath.Join(suite.root, "etc/trireme/pki")
	ca, err := testpki.LoadCA(filepath.Join(pki, "ca.crt"), filepath.Join(pki, "ca.key"))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("cluster CA: %w", err)
	}
	return ca.Issue(testpki.Cert{CommonName: "bench-top fake kubelets", IPs: []net.IP{net.ParseIP(nodeIP)}, Usage: testpki.ServerAuth}).TLSCertificate(), nil
}
