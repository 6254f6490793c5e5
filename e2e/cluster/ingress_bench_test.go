package cluster

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"trireme.dev/e2e/internal/load"
)

// The work of BenchmarkIngress, as issue 26 sets it.
const (
	ingressBenchNS    = "bench-ingress"
	ingressBenchConns = 64
	ingressBenchTime  = 20 * time.Second
	ingressBenchMany  = 1000
)

// benchIngress routes web.bench to the Service web of bench-ingress.
const benchIngress = `---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: bench-ingress}
spec:
  rules:
  - host: web.bench
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`

// BenchmarkIngress measures Traefik, the addons' ingress controller, against
// issue 26's targets:
//   - a Go client with 64 keep-alive connections for 20 s through Traefik
//     (its LoadBalancer address, an Ingress host) to a two-pod backend, beside
//     the same load sent straight to one pod's IP: Traefik's requests per
//     second at least 50 % of the direct ones, at most 2 ms added at p99;
//   - 1,000 Ingresses created at once: all serving within 10 s, and Traefik's
//     RSS before and after;
//   - then, as the benchmark's loop, one request at a time through Traefik.
//
// The client, Traefik and the backends share this machine's cores, so the
// figures are those of one machine doing all three.
//
//	make bench-cluster (or: TRIREME_E2E_CLUSTER=1 go test -run '^$' -bench Ingress -benchtime 1x ./e2e/cluster/)
func BenchmarkIngress(b *testing.B) {
	lb := lbAddress(b, "kube-system", "traefik")
	b.Cleanup(func() { _, _ = kubectl("delete", "namespace", ingressBenchNS, "--wait=false", "--ignore-not-found") })
	apply(b, echoNamespace(ingressBenchNS, "web")+benchIngress)
	must(b, "-n", ingressBenchNS, "scale", "deployment/web", "--replicas=2")
	must(b, "-n", ingressBenchNS, "rollout", "status", "deployment/web", "--timeout=120s")
	podIPs := strings.Fields(must(b, "-n", ingressBenchNS, "get", "pods", "-l", "app=web", "--field-selector=status.phase=Running", "-o", "jsonpath={.items[*].status.podIP}"))
	if len(podIPs) != 2 {
		b.Fatalf("Running web pods at %v, want 2", podIPs)
	}
	podIP := podIPs[0]
	reference := startReferenceProxy(b, podIPs)

	const (
		viaTraefik = "http://web.bench/hostname"
		toPod      = "http://web.bench:8080/hostname"
	)
	traefik := clientVia(lb, nil, ingressBenchConns)
	direct := clientVia(podIP, nil, ingressBenchConns)
	slowly.ForNil(b, 60*time.Second, viaTraefik, func() error { return expect(traefik, viaTraefik, 200, "web-") })
	slowly.ForNil(b, 30*time.Second, toPod, func() error { return expect(direct, toPod, 200, "web-") })

	run := func(what string, c *http.Client, url string) load.Summary {
		l := startLoad(c, url, "web-", ingressBenchConns, 0)
		time.Sleep(ingressBenchTime)
		r := l.stop()
		fmt.Printf("e2e/cluster: ingress: %s: %.0f requests/s, p50 %s, p99 %s, %d failed\n",
			what, r.Throughput, r.P50.Round(10*time.Microsecond), r.P99.Round(10*time.Microsecond), r.Errors)
		if r.Errors > 0 {
			b.Errorf("%s: %d requests failed: %s", what, r.Errors, strings.Join(r.ErrorTexts, "; "))
		}
		return r
	}
	straight := run(fmt.Sprintf("straight to pod %s, %d connections, %s", podIP, ingressBenchConns, ingressBenchTime), direct, toPod)
	through := run(fmt.Sprintf("through Traefik at %s to 2 pods, %d connections, %s", lb, ingressBenchConns, ingressBenchTime), traefik, viaTraefik)
	// What any user-space proxy costs on this machine: the least of one,
	// Go's ReverseProxy in this process, on the same work.
	least := run(fmt.Sprintf("through a bare Go reverse proxy in this process to 2 pods, %d connections, %s", ingressBenchConns, ingressBenchTime),
		clientVia("127.0.0.1", nil, ingressBenchConns), "http://web.bench:"+reference+"/hostname")
	share := through.Throughput / straight.Throughput
	added := through.P99 - straight.P99
	fmt.Printf("e2e/cluster: ingress: the bare reverse proxy's rate %.0f %% of the direct one, p99 added %s\n",
		100*least.Throughput/straight.Throughput, (least.P99 - straight.P99).Round(10*time.Microsecond))
	fmt.Printf("e2e/cluster: ingress: Traefik's rate %.0f %% of the direct one (target >= 50 %%), p99 added %s (target <= 2ms)\n",
		100*share, added.Round(10*time.Microsecond))
	b.ReportMetric(100*share, "%-of-direct")
	b.ReportMetric(float64(added.Microseconds())/1000, "p99-added-ms")

	rssBefore, err := traefikRSS()
	if err != nil {
		b.Fatal(err)
	}
	served, err := manyIngresses(lb)
	rssAfter, rssErr := traefikRSS()
	if rssErr != nil {
		b.Error(rssErr)
	}
	fmt.Printf("e2e/cluster: ingress: Traefik's RSS %s before the %d Ingresses, %s after\n", mib(rssBefore), ingressBenchMany, mib(rssAfter))
	if err != nil {
		b.Fatal(err)
	}
	fmt.Printf("e2e/cluster: ingress: %d Ingresses created at once, all serving after %s (target <= 10s)\n",
		ingressBenchMany, served.Round(100*time.Millisecond))
	b.ReportMetric(served.Seconds(), "1000-ingresses-s")
	b.ReportMetric(float64(rssAfter)/(1<<20), "traefik-rss-MiB")

	// The loop times one request at a time through Traefik with 1,000
	// Ingresses in its configuration: the figures above are taken once,
	// whatever -benchtime says.
	for b.Loop() {
		if err := expect(traefik, viaTraefik, 200, "web-"); err != nil {
			b.Fatal(err)
		}
	}
}

// manyIngresses creates ingressBenchMany Ingresses, host many-N.bench each,
// to the Service web, 32 requests at a time through client-go (kubectl
// spends about 45 ms of its own CPU on each object it creates), and returns
// the time from the first create until each host has answered through
// Traefik at lb.
func manyIngresses(lb string) (time.Duration, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", suite.admin)
	if err != nil {
		return 0, err
	}
	cfg.QPS, cfg.Burst = -1, 0 // no client-side limit: "at once"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	pending := map[string]bool{}
	names := make(chan int)
	errs := make(chan error, ingressBenchMany)
	var creators sync.WaitGroup
	start := time.Now()
	for range 32 {
		creators.Go(func() {
			for i := range names {
				_, err := client.NetworkingV1().Ingresses(ingressBenchNS).Create(context.Background(), manyIngress(i), metav1.CreateOptions{})
				errs <- err
			}
		})
	}
	for i := range ingressBenchMany {
		pending[fmt.Sprintf("many-%04d.bench", i)] = true
		names <- i
	}
	close(names)
	creators.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return 0, fmt.Errorf("create Ingresses: %w", err)
		}
	}
	created := time.Since(start)
	fmt.Printf("e2e/cluster: ingress: %d Ingresses created in %s\n", ingressBenchMany, created.Round(100*time.Millisecond))
	c := clientVia(lb, nil, 16)
	// How many serve, every 10 s, so that a slow run still says how slow.
	next := 10 * time.Second
	for len(pending) > 0 {
		if since := time.Since(start); since >= next {
			fmt.Printf("e2e/cluster: ingress: %d of %d Ingresses serving after %s\n", ingressBenchMany-len(pending), ingressBenchMany, since.Round(time.Second))
			next += 10 * time.Second
		}
		if time.Since(start) > 2*time.Minute {
			return 0, fmt.Errorf("%d of %d Ingresses not serving after 2m", len(pending), ingressBenchMany)
		}
		// Every pending host once, 16 at a time.
		hosts := make(chan string)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for host := range hosts {
					if expect(c, "http://"+host+"/hostname", 200, "web-") == nil {
						mu.Lock()
						delete(pending, host)
						mu.Unlock()
					}
				}
			})
		}
		for host := range pending {
			hosts <- host
		}
		close(hosts)
		wg.Wait()
	}
	served := time.Since(start)
	fmt.Printf("e2e/cluster: ingress: the last one serving %s after the last create\n", (served - created).Round(100*time.Millisecond))
	return served, nil
}

// manyIngress is Ingress many-i of bench-ingress: host many-i.bench to the
// Service web.
func manyIngress(i int) *networkingv1.Ingress {
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("many-%04d", i), Namespace: ingressBenchNS},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
			Host: fmt.Sprintf("many-%04d.bench", i),
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix),
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}},
			}}}},
		}}},
	}
}

// traefikRSS reads process_resident_memory_bytes from the metrics entry
// point (:9100) of the first Traefik pod.
func traefikRSS() (int64, error) {
	ip, err := kubectl("-n", "kube-system", "get", "pods", "-l", "app.kubernetes.io/name=traefik",
		"--field-selector=status.phase=Running", "-o", "jsonpath={.items[0].status.podIP}")
	if err != nil {
		return 0, err
	}
	resp, err := http.Get("http://" + ip + ":9100/metrics")
	if err != nil {
		return 0, fmt.Errorf("Traefik's metrics: %w", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "process_resident_memory_bytes "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int64(f), err
		}
	}
	return 0, fmt.Errorf("no process_resident_memory_bytes in Traefik's metrics (%v)", sc.Err())
}

// mib formats a byte count in MiB.
func mib(n int64) string {
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// startReferenceProxy serves Go's httputil.ReverseProxy on a loopback port,
// round-robin over the pods' port 8080 with keep-alive, until b ends, and
// returns the port: the least any HTTP proxy adds, for BenchmarkIngress's
// figures beside Traefik's.
func startReferenceProxy(b *testing.B, podIPs []string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var next atomic.Uint64
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			ip := podIPs[next.Add(1)%uint64(len(podIPs))]
			r.SetURL(&url.URL{Scheme: "http", Host: net.JoinHostPort(ip, "8080")})
		},
		Transport: &http.Transport{MaxIdleConnsPerHost: ingressBenchConns},
	}
	srv := &http.Server{Handler: proxy}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}
