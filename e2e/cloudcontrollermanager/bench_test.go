package cloudcontrollermanager_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"trireme.dev/componentbase/testcluster"

	"trireme.dev/componentbase/testwait"
)

// BenchmarkLoadBalancer500 creates 500 LoadBalancer Services at once and
// reports the time from each one's create to its status.loadBalancer:
// with --concurrent-service-syncs=10 and client QPS 500, with upstream's
// defaults (1 sync, QPS 20, burst 30), and with 1 sync at QPS 50.
func BenchmarkLoadBalancer500(b *testing.B) {
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"syncs=10,qps=500", []string{"--concurrent-service-syncs=10", "--kube-api-qps=500", "--kube-api-burst=1000"}},
		{"upstream-defaults", nil},
		{"syncs=1,qps=50", []string{"--kube-api-qps=50", "--kube-api-burst=100"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for range b.N {
				lat := createMany(b, 500, bc.args)
				report(b, "create→status", lat)
			}
		})
	}
}

// createMany runs an apiserver and the CCM with args, creates n Services
// from 50 clients at once and returns each one's create-to-address latency.
func createMany(b *testing.B, n int, args []string) []time.Duration {
	b.Helper()
	srv := testcluster.StartAPIServer(b, testcluster.APIServerOptions{})
	rc := srv.Config()
	rc.QPS, rc.Burst = -1, 0 // the benchmark's own client is not the bottleneck
	cs := kubernetes.NewForConfigOrDie(rc)
	installCRD(b, srv)
	registerNode(b, cs, "bench-node", "10.10.0.1", nil, true)
	config := filepath.Join(b.TempDir(), "cloud.yaml")
	if err := os.WriteFile(config, []byte(`apiVersion: cloudconfig.config.trireme.dev/v1alpha1
kind: CloudConfiguration
loadBalancer:
  pools:
  - name: default
    addresses: ["198.19.0.0/22"]
`), 0o600); err != nil {
		b.Fatal(err)
	}
	startCCM(b, srv, config, args...)
	testwait.For(b, timeout, "the CCM leading", func(ctx context.Context) (bool, error) {
		l, err := cs.CoordinationV1().Leases("kube-system").Get(ctx, "cloud-controller-manager", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "", fmt.Errorf("no holder")
	})
	// One Service served before the clock starts: the figure is the steady
	// state, not the CCM's first informer sync after it took the lease.
	waitForIngress(b, cs, createLBService(b, cs, "warm-up", corev1.ServiceExternalTrafficPolicyCluster))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// The apiserver closes a watch that falls behind 1,000 events in a few
	// seconds, as upstream's does: a RetryWatcher resumes it where it ended.
	svcs := cs.CoreV1().Services("default")
	list, err := svcs.List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return svcs.Watch(ctx, o)
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	var mu sync.Mutex
	created := map[string]time.Time{}
	done := map[string]time.Duration{}
	all := make(chan struct{})
	go func() {
		for ev := range w.ResultChan() {
			s, ok := ev.Object.(*corev1.Service)
			if !ok || ev.Type != watch.Modified || len(s.Status.LoadBalancer.Ingress) == 0 {
				continue
			}
			now := time.Now()
			mu.Lock()
			if _, seen := done[s.Name]; !seen {
				if t0, ok := created[s.Name]; ok {
					done[s.Name] = now.Sub(t0)
				}
			}
			finished := len(done) == n
			mu.Unlock()
			if finished {
				close(all)
				return
			}
		}
	}()
	names := make(chan string, n)
	for i := range n {
		names <- "lb-" + strconv.Itoa(i)
	}
	close(names)
	b.ResetTimer()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for name := range names {
				svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
					Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
						Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
				mu.Lock()
				created[name] = time.Now()
				mu.Unlock()
				if _, err := cs.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
					b.Error(err)
				}
			}
		})
	}
	wg.Wait()
	select {
	case <-all:
	case <-ctx.Done():
		mu.Lock()
		b.Fatalf("%d of %d Services got an address in 10 minutes", len(done), n)
	}
	b.StopTimer()
	mu.Lock()
	defer mu.Unlock()
	out := make([]time.Duration, 0, n)
	for _, d := range done {
		out = append(out, d)
	}
	return out
}

// report logs and reports the median, p99 and maximum of lat.
func report(b *testing.B, what string, lat []time.Duration) {
	b.Helper()
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	b.ReportMetric(q(0.5).Seconds(), "p50-s")
	b.ReportMetric(q(0.99).Seconds(), "p99-s")
	b.ReportMetric(lat[len(lat)-1].Seconds(), "max-s")
	b.Logf("%s over %d: p50 %s, p99 %s, max %s", what, len(lat), q(0.5).Round(time.Millisecond), q(0.99).Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
}

// BenchmarkAnnounceFailover100 announces 100 addresses from three nodes,
// kills the node holding the most, and reports how long each of its
// addresses took to be held by another node; and the idle RSS of the CCM
// and of one announcer before the kill.
func BenchmarkAnnounceFailover100(b *testing.B) {
	for range b.N {
		tp := newLBTopology(b, 3, 128)
		for i := range 100 {
			createLBService(b, tp.cs, "web-"+strconv.Itoa(i), corev1.ServiceExternalTrafficPolicyCluster)
		}
		var held map[string][]string
		testwait.For(b, timeout, "100 addresses held once each", func(context.Context) (bool, error) {
			held = tp.held()
			for _, nodes := range held {
				if len(nodes) != 1 {
					return false, fmt.Errorf("held twice: %v", nodes)
				}
			}
			return len(held) == 100, fmt.Errorf("%d held", len(held))
		})
		count := map[string]int{}
		for _, nodes := range held {
			count[nodes[0]]++
		}
		b.Logf("addresses per node: %v", count)
		time.Sleep(10 * time.Second)
		reportRSS(b, "ccm", tp.ccm.proc.PID())
		reportRSS(b, "announcer", tp.nodes[tp.names[0]].announcer.PID())
		dead := tp.names[0]
		for _, n := range tp.names {
			if count[n] > count[dead] {
				dead = n
			}
		}
		var moving []string
		for ip, nodes := range held {
			if nodes[0] == dead {
				moving = append(moving, ip)
			}
		}
		b.ResetTimer()
		start := time.Now()
		tp.kill(b, dead)
		moved := map[string]time.Duration{}
		for len(moved) < len(moving) && time.Since(start) < time.Minute {
			now := tp.held()
			at := time.Since(start)
			for _, ip := range moving {
				if _, ok := moved[ip]; ok {
					continue
				}
				if slices.ContainsFunc(now[ip], func(n string) bool { return n != dead }) {
					moved[ip] = at
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		b.StopTimer()
		if len(moved) < len(moving) {
			b.Fatalf("%d of %d addresses moved in a minute", len(moved), len(moving))
		}
		lat := make([]time.Duration, 0, len(moved))
		for _, d := range moved {
			lat = append(lat, d)
		}
		report(b, fmt.Sprintf("failover of %s's addresses", dead), lat)
		if ip := moving[0]; tp.answer(ip) == "" {
			b.Errorf("%s does not answer after the failover", ip)
		}
	}
}

// reportRSS reports the resident memory of process pid as name-RSS-MiB.
func reportRSS(b *testing.B, name string, pid int) {
	b.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			b.ReportMetric(float64(kb)/1024, name+"-RSS-MiB")
			b.Logf("%s RSS %.1f MiB", name, float64(kb)/1024)
		}
	}
}
