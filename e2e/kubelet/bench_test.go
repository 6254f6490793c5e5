package kubelet_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// BenchmarkPodStartup creates pods bound to the node at a steady rate
// (local image, no token volume) and reports, from each create, the time
// until the watch shows it Running and Ready: p50, p99 and max, with the
// kubelet's RSS and CPU. KUBELET_BENCH_PODS and KUBELET_BENCH_RATE (pods/s)
// override 50 pods at 5/s. It prints figures and asserts nothing.
func BenchmarkPodStartup(b *testing.B) {
	n, rate := envInt("KUBELET_BENCH_PODS", 50), envInt("KUBELET_BENCH_RATE", 5)
	for b.Loop() {
		benchPodStartup(b, n, rate)
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func benchPodStartup(b *testing.B, n, rate int) {
	ctx := context.Background()
	ns := fmt.Sprintf("bench-%d", time.Now().UnixNano()%1e6)
	if _, err := suite.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = suite.client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{})
		_ = waitFor(ctx, 120*time.Second, func() (bool, error) {
			l, err := suite.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			return err == nil && len(l.Items) == 0, nil
		})
		_ = suite.client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	}()
	idleRSS := rssMiB(suite.kubelet.PID())
	cpuStart, wallStart := cpuSeconds(suite.kubelet.PID()), time.Now()

	w, err := suite.client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.Everything().String()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	var mu sync.Mutex
	created := map[string]time.Time{}
	var latencies []time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if ev.Type != watch.Modified && ev.Type != watch.Added {
				continue
			}
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || !isReady(p) {
				continue
			}
			mu.Lock()
			if t, ok := created[p.Name]; ok {
				latencies = append(latencies, time.Since(t))
				delete(created, p.Name)
			}
			finished := len(latencies) == n
			mu.Unlock()
			if finished {
				return
			}
		}
	}()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for i := range n {
		<-tick.C
		pod := boundPod(fmt.Sprintf("p%03d", i), corev1.Container{Name: "app", Image: suite.busybox, Command: []string{"sleep", "3600"}})
		pod.Namespace = ns
		pod.Spec.AutomountServiceAccountToken = ptr.To(false)
		mu.Lock()
		created[pod.Name] = time.Now()
		mu.Unlock()
		if _, err := suite.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		b.Fatalf("only %d of %d pods became Ready", len(latencies), n)
	}
	busyRSS := rssMiB(suite.kubelet.PID())
	// Steady state: the pods run, nothing changes.
	cpuSteady0, wallSteady0 := cpuSeconds(suite.kubelet.PID()), time.Now()
	time.Sleep(10 * time.Second)
	steadyCPU := (cpuSeconds(suite.kubelet.PID()) - cpuSteady0) / time.Since(wallSteady0).Seconds() * 100
	burstCPU := (cpuSteady0 - cpuStart) / wallSteady0.Sub(wallStart).Seconds() * 100

	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	pct := func(q float64) time.Duration { return latencies[min(len(latencies)-1, int(q*float64(len(latencies))))] }
	b.ReportMetric(pct(0.5).Seconds(), "p50-s")
	b.ReportMetric(pct(0.99).Seconds(), "p99-s")
	b.ReportMetric(latencies[len(latencies)-1].Seconds(), "max-s")
	b.ReportMetric(busyRSS, "rss-MiB")
	b.ReportMetric(steadyCPU, "steady-cpu-%")
	fmt.Printf("kubelet pod start-up: %d pods at %d/s: create→Running+Ready p50 %.2fs p99 %.2fs max %.2fs; RSS idle %.0f MiB, with pods %.0f MiB; CPU during creation %.1f%%, steady %.2f%% of one core\n",
		n, rate, pct(0.5).Seconds(), pct(0.99).Seconds(), latencies[len(latencies)-1].Seconds(), idleRSS, busyRSS, burstCPU, steadyCPU)
}

func rssMiB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}

// cpuSeconds is the process's user+system CPU time (clock ticks are 100/s
// on Linux).
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100
}
