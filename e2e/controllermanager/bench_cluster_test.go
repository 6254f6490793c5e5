package controllermanager_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"trireme.dev/componentbase/testcluster"
)

// benchCluster starts an apiserver of its own and a controller-manager
// with its client rate limits raised (CM_BENCH_QPS, default 200 queries/s
// per controller), so the figures measure the controllers, not the
// default 20 QPS throttle; extra are more flags. CM_BENCH_LOG names a file
// to keep the controller-manager's log in.
func benchCluster(b *testing.B, extra ...string) (*testcluster.APIServer, kubernetes.Interface) {
	b.Helper()
	s := testcluster.StartAPIServer(b, testcluster.APIServerOptions{})
	bin, err := testcluster.Binary(testcluster.ControllerManagerBinary)
	if err != nil {
		b.Fatal(err)
	}
	qps := os.Getenv("CM_BENCH_QPS")
	if qps == "" {
		qps = "200"
	}
	logPath := os.Getenv("CM_BENCH_LOG")
	if logPath == "" {
		logPath = filepath.Join(b.TempDir(), "controller-manager.log")
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { logFile.Close() })
	args := append([]string{
		"--kubeconfig", s.KubeconfigPath(), "--leader-elect=false",
		"--kube-api-qps", qps, "--kube-api-burst", qps,
	}, extra...)
	// CM_BENCH_METRICS_PORT serves the controller-manager's /metrics there,
	// logged at the end of the benchmark (and its profiles, with
	// CM_BENCH_PROFILE).
	if port := os.Getenv("CM_BENCH_METRICS_PORT"); port != "" {
		// The admin identity reads them, authorized by the apiserver.
		args = append(args, "--bind-address=127.0.0.1", "--secure-port="+port,
			"--authentication-kubeconfig", s.KubeconfigPath(), "--authorization-kubeconfig", s.KubeconfigPath())
		if os.Getenv("CM_BENCH_PROFILE") != "" {
			args = append(args, "--profiling")
		}
	} else {
		args = append(args, "--secure-port=0")
	}
	proc, err := testcluster.StartProcess(bin, args, logFile)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := proc.Stop(10 * time.Second); err != nil {
			b.Logf("stop controller-manager: %v", err)
		}
	})
	if port := os.Getenv("CM_BENCH_METRICS_PORT"); port != "" {
		// Cleanups run last first: this one before the stop above.
		b.Cleanup(func() { logMetrics(b, adminHTTPClient(b, s), port) })
	}
	b.Logf("controller-manager %v, log %s", args[4:], logPath)
	return s, s.Clientset(b)
}

func benchNamespace(b *testing.B, cs kubernetes.Interface, name string) {
	b.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
}

// parallel runs n calls of f on 32 goroutines and fails on the first error.
func parallel(b *testing.B, n int, f func(i int) error) {
	b.Helper()
	var wg sync.WaitGroup
	var failed atomic.Value
	sem := make(chan struct{}, 32)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := f(i); err != nil {
				failed.CompareAndSwap(nil, err)
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkGCDependents10000 deletes an owner of 10,000 ConfigMaps in the
// background and reports the time until the last dependent is gone.
func BenchmarkGCDependents10000(b *testing.B) {
	const n = 10000
	_, cs := benchCluster(b)
	ctx := context.Background()
	for iter := 0; b.Loop(); iter++ {
		b.StopTimer()
		ns := fmt.Sprintf("gc-bench-%d", iter)
		benchNamespace(b, cs, ns)
		owner, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		ref := []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: owner.UID}}
		parallel(b, n, func(i int) error {
			_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("dep-%d", i), OwnerReferences: ref}}, metav1.CreateOptions{})
			return err
		})
		list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			b.Fatal(err)
		}
		w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
		if err != nil {
			b.Fatal(err)
		}
		// Let the collector's graph take in the dependents before timing.
		time.Sleep(2 * time.Second)
		b.StartTimer()
		start := time.Now()
		if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
		gone := 0
		timeout := time.After(10 * time.Minute)
		for gone < n {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					b.Fatalf("watch closed after %d deletions", gone)
				}
				if cm, isCM := ev.Object.(*corev1.ConfigMap); ev.Type == watch.Deleted && isCM && cm.Name != "owner" && cm.Name != "kube-root-ca.crt" {
					gone++
				}
			case <-timeout:
				b.Fatalf("only %d of %d dependents collected in 10m", gone, n)
			}
		}
		took := time.Since(start)
		w.Stop()
		b.ReportMetric(took.Seconds(), "s/10k-dependents")
		b.ReportMetric(float64(n)/took.Seconds(), "deletions/s")
		b.Logf("garbage collector removed %d dependents in %v (%.0f/s)", n, took.Round(time.Millisecond), float64(n)/took.Seconds())
	}
}

// BenchmarkEndpointSliceChurn runs 1,000 Services of 2 pods each and
// flips pods' readiness at 100 changes a second for 30 seconds; for each
// pod made ready it measures the time until a watch sees its Service's
// EndpointSlice list it as ready.
func BenchmarkEndpointSliceChurn(b *testing.B) {
	const (
		services   = 1000
		podsPerSvc = 2
		duration   = 30 * time.Second
	)
	// CM_BENCH_RATE overrides the 100 changes a second the target is set at.
	rate := 100
	if v, err := strconv.Atoi(os.Getenv("CM_BENCH_RATE")); err == nil && v > 0 {
		rate = v
	}
	// Upstream's 5 workers a controller cannot keep 100 writes/s flowing
	// when each write takes tens of milliseconds on a loaded machine.
	workers := os.Getenv("CM_BENCH_ENDPOINT_WORKERS")
	if workers == "" {
		workers = "50"
	}
	s, cs := benchCluster(b, "--concurrent-service-endpoint-syncs="+workers, "--concurrent-endpoint-syncs="+workers)
	ctx := context.Background()
	ns := "eps-bench"
	benchNamespace(b, cs, ns)
	eventuallyB(b, 30*time.Second, func() bool {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
	// A Ready node whose Lease the harness renews, as its kubelet would:
	// a silent node gets its 2,000 pods marked not ready by the node
	// lifecycle controller a minute in, in the middle of the churn.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "eps-bench-node"}}
	makeNode(b, cs, node.Name, nil)
	leaseCtx, stopLease := context.WithCancel(ctx)
	defer stopLease()
	go func() {
		for {
			select {
			case <-leaseCtx.Done():
				return
			case <-time.After(5 * time.Second):
				_ = renewLease(leaseCtx, cs, node.Name)
			}
		}
	}()
	parallel(b, services, func(i int) error {
		_, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%d", i)},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"svc": fmt.Sprint(i)},
				Ports: []corev1.ServicePort{{Port: 80}}},
		}, metav1.CreateOptions{})
		return err
	})
	pods := make([]*corev1.Pod, services*podsPerSvc)
	parallel(b, len(pods), func(i int) error {
		p, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i), Labels: map[string]string{"svc": fmt.Sprint(i / podsPerSvc)}},
			Spec:       corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		// Half the pods start not ready, so churn makes pods ready from the
		// first change on.
		pods[i], err = setPodStatus(ctx, cs, p, fmt.Sprintf("10.%d.%d.%d", 100+i/65536, i/256%256, i%256), i%2 == 0)
		return err
	})
	// Wait until every Service's slice lists its pods.
	eventuallyB(b, 5*time.Minute, func() bool {
		list, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		total := 0
		for _, s := range list.Items {
			total += len(s.Endpoints)
		}
		return total == len(pods)
	})
	ready := make([]bool, len(pods))
	for i := range ready {
		ready[i] = i%2 == 0
	}

	var (
		mu sync.Mutex
		// pending holds, for each pod being made ready, when the status
		// write was sent and when the apiserver answered it: the pod became
		// ready between the two.
		pending = map[string]*[2]time.Time{}
		lat     []time.Duration // from the write being sent: an upper bound
		latAck  []time.Duration // from the write's answer: a lower bound
	)
	list, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	w, err := cs.DiscoveryV1().EndpointSlices(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	go func() {
		for ev := range w.ResultChan() {
			s, ok := ev.Object.(*discoveryv1.EndpointSlice)
			if !ok {
				continue
			}
			now := time.Now()
			mu.Lock()
			for _, e := range s.Endpoints {
				if e.TargetRef == nil || e.Conditions.Ready == nil || !*e.Conditions.Ready {
					continue
				}
				if t, ok := pending[e.TargetRef.Name]; ok {
					lat = append(lat, now.Sub(t[0]))
					ack := t[1]
					if ack.IsZero() || ack.After(now) {
						ack = now
					}
					latAck = append(latAck, now.Sub(ack))
					delete(pending, e.TargetRef.Name)
				}
			}
			mu.Unlock()
		}
	}()

	// CM_BENCH_PROFILE names a file for a CPU profile of the
	// controller-manager taken during the churn (needs
	// CM_BENCH_METRICS_PORT; the bench passes --profiling then).
	profileDone := make(chan struct{})
	if path, port := os.Getenv("CM_BENCH_PROFILE"), os.Getenv("CM_BENCH_METRICS_PORT"); path != "" && port != "" {
		client := adminHTTPClient(b, s)
		go func() {
			defer close(profileDone)
			saveProfile(b, client, port, path, duration-5*time.Second)
		}()
	} else {
		close(profileDone)
	}

	b.ResetTimer()
	var podMu sync.Mutex
	changes := make(chan int, rate)
	var wg sync.WaitGroup
	var failures, written atomic.Int64
	// Enough writers that 100 writes/s keep flowing even when one write
	// takes most of a second on a loaded machine.
	for range 128 {
		wg.Go(func() {
			for i := range changes {
				podMu.Lock()
				p := pods[i]
				makeReady := !ready[i]
				ready[i] = makeReady
				podMu.Unlock()
				t := &[2]time.Time{time.Now()}
				if makeReady {
					mu.Lock()
					pending[p.Name] = t
					mu.Unlock()
				}
				np, err := setPodStatus(ctx, cs, p, p.Status.PodIP, makeReady)
				if makeReady {
					mu.Lock()
					t[1] = time.Now()
					mu.Unlock()
				}
				if err != nil {
					failures.Add(1)
					if makeReady {
						mu.Lock()
						delete(pending, p.Name)
						mu.Unlock()
					}
					continue
				}
				written.Add(1)
				podMu.Lock()
				pods[i] = np
				podMu.Unlock()
			}
		})
	}
	// Changes walk a random permutation of the pods, so one pod's changes
	// are seconds apart and never overlap. The n-th change is due at
	// begin + n/rate: a late one is sent at once rather than dropped, as
	// a ticker would, so the rate offered is the rate asked for.
	begin := time.Now()
	total := int(duration.Seconds() * float64(rate))
	perm := rand.Perm(len(pods))
	for sent := range total {
		if wait := time.Until(begin.Add(time.Duration(sent) * time.Second / time.Duration(rate))); wait > 0 {
			time.Sleep(wait)
		}
		changes <- perm[sent%len(perm)]
	}
	close(changes)
	wg.Wait()
	elapsed := time.Since(begin)
	achieved := float64(written.Load()) / elapsed.Seconds()
	// Give the last changes time to land.
	eventuallyB(b, 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(pending) == 0
	})
	b.StopTimer()
	<-profileDone
	mu.Lock()
	defer mu.Unlock()
	if len(lat) == 0 {
		b.Fatal("no latencies measured")
	}
	slices.Sort(lat)
	slices.Sort(latAck)
	pctOf := func(l []time.Duration, p float64) time.Duration { return l[min(len(l)-1, int(float64(len(l))*p))] }
	pct := func(p float64) time.Duration { return pctOf(lat, p) }
	b.ReportMetric(float64(pct(0.50).Milliseconds()), "p50-ms")
	b.ReportMetric(float64(pct(0.99).Milliseconds()), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Milliseconds()), "max-ms")
	b.ReportMetric(float64(pctOf(latAck, 0.99).Milliseconds()), "p99-from-ack-ms")
	b.Logf("from the status write's answer: p50 %v p99 %v", pctOf(latAck, 0.50), pctOf(latAck, 0.99))
	b.ReportMetric(achieved, "changes/s")
	b.Logf("%d Services, %d pods, %d changes written at %.1f/s over %v (target %d/s, %d failed writes); pod ready → slice lists it: p50 %v p99 %v max %v over %d samples",
		services, len(pods), written.Load(), achieved, elapsed.Round(time.Millisecond), rate, failures.Load(), pct(0.50), pct(0.99), lat[len(lat)-1], len(lat))
}

func eventuallyB(b *testing.B, timeout time.Duration, cond func() bool) {
	b.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatalf("condition not met within %v", timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// logMetrics logs the controller-manager's sync and queue figures of the
// endpoint controllers.
func logMetrics(b *testing.B, client *http.Client, port string) {
	resp, err := client.Get("https://127.0.0.1:" + port + "/metrics")
	if err != nil {
		b.Logf("metrics: %v", err)
		return
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "endpoint") && (strings.Contains(line, "_sum") || strings.Contains(line, "_count")) {
			b.Log(line)
		}
	}
}

// saveProfile writes a CPU profile of the controller-manager of length d
// to path.
func saveProfile(b *testing.B, client *http.Client, port, path string, d time.Duration) {
	resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%s/debug/pprof/profile?seconds=%d", port, int(d.Seconds())))
	if err != nil {
		b.Logf("profile: %v", err)
		return
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		b.Logf("profile: %v", err)
		return
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		b.Logf("profile: %v", err)
	}
	b.Logf("controller-manager CPU profile of %v in %s", d, path)
}

// adminHTTPClient presents s's admin client certificate, which the
// controller-manager verifies with the client CA the apiserver publishes,
// and trusts any server certificate (the controller-manager's is
// self-signed).
func adminHTTPClient(b *testing.B, s *testcluster.APIServer) *http.Client {
	cfg := s.Config()
	cfg.TLSClientConfig.CAData, cfg.TLSClientConfig.CAFile = nil, ""
	cfg.TLSClientConfig.Insecure = true
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return client
}
