package kubelet_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	cri "k8s.io/cri-api/pkg/apis"
	"k8s.io/utils/ptr"
)

// BenchmarkPodStartup creates pods bound to the node at a steady rate
// (local image, no token volume) and reports, from each create, the time
// until the watch shows it Running and Ready: p50, p99 and max, with the
// kubelet's RSS and CPU. It runs the two scenarios, 50 pods at
// 5/s and 100 pods at 20/s; KUBELET_BENCH_PODS and KUBELET_BENCH_RATE
// (pods/s) replace them with one. With 100 pods it also measures the
// kubelet's steady-state CPU over KUBELET_BENCH_STEADY seconds (20).
// KUBELET_BENCH_PROFILE=dir writes the kubelet's CPU profiles of each
// scenario's creation phase and steady state (from its /debug/pprof
// handler) there. It
// prints figures and asserts nothing.
//
// The burst's figures follow the machine's recent past: on a root file
// system of ext4 without a journal (these machines'), every new inode is
// found by scanning past those deleted in the last minutes, and containerd,
// runc and the kubelet all create inodes for each pod. Right after many
// files were deleted (a CI run, another suite) the same burst has measured
// two to three times its settled p99; compare runs on a settled machine.
func BenchmarkPodStartup(b *testing.B) {
	scenarios := [][2]int{{50, 5}, {100, 20}}
	if n := envInt("KUBELET_BENCH_PODS", 0); n > 0 {
		scenarios = [][2]int{{n, envInt("KUBELET_BENCH_RATE", 5)}}
	}
	// Idle: the kubelet runs no pods yet.
	idleRSS := rssMiB(suite.kubelet.PID())
	idleCPU0, idleWall0 := cpuSeconds(suite.kubelet.PID()), time.Now()
	time.Sleep(5 * time.Second)
	idleCPU := (cpuSeconds(suite.kubelet.PID()) - idleCPU0) / time.Since(idleWall0).Seconds() * 100
	fmt.Printf("kubelet idle: RSS %.0f MiB, CPU %.2f%% of one core (load average %s)\n", idleRSS, idleCPU, loadAverage())
	b.ReportMetric(idleRSS, "idle-rss-MiB")
	for _, s := range scenarios {
		b.Run(fmt.Sprintf("%dpods-%dpersec", s[0], s[1]), func(b *testing.B) {
			for b.Loop() {
				benchPodStartup(b, s[0], s[1])
			}
		})
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
		// Wait for the runtime too, so the next scenario starts on an
		// idle node.
		rs, err := suite.containerd.RuntimeService(ctx)
		if err != nil {
			b.Fatal(err)
		}
		_ = waitFor(ctx, 180*time.Second, func() (bool, error) {
			l, err := suite.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			return err == nil && len(l.Items) == 0 && sandboxes(ctx, rs) == 0, nil
		})
		_ = suite.client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	}()
	startRSS := rssMiB(suite.kubelet.PID())
	kubeletPID, containerdPID := suite.kubelet.PID(), suite.containerd.PID()
	cpuStart, cdCPUStart, wallStart := cpuSeconds(kubeletPID), cpuSeconds(containerdPID), time.Now()
	loadStart := loadAverage()
	steps0 := startSteps(b)
	requests0 := apiRequests(ctx, b)

	w, err := suite.client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	var mu sync.Mutex
	created := map[string]time.Time{}
	var latencies []time.Duration
	var trace []string
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
				trace = append(trace, fmt.Sprintf("%s %d %d", p.Name, t.UnixNano(), time.Now().UnixNano()))
				delete(created, p.Name)
			}
			finished := len(latencies) == n
			mu.Unlock()
			if finished {
				return
			}
		}
	}()
	var profile chan []byte
	if dir := os.Getenv("KUBELET_BENCH_PROFILE"); dir != "" {
		profile = make(chan []byte, 1)
		secs := n/rate + 3
		go func() {
			_, body := kubeletGetWithin(b, suite.apiClient, fmt.Sprintf("/debug/pprof/profile?seconds=%d", secs), time.Duration(secs+30)*time.Second)
			profile <- body
		}()
	}
	// Each create runs on its own, so that a slow apiserver does not
	// lower the rate.
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	var creates sync.WaitGroup
	errc := make(chan error, n)
	returned := make([]time.Time, n)
	for i := range n {
		<-tick.C
		pod := boundPod(fmt.Sprintf("p%03d", i), corev1.Container{Name: "app", Image: suite.busybox, Command: []string{"sleep", "3600"}})
		pod.Namespace = ns
		pod.Spec.AutomountServiceAccountToken = ptr.To(false)
		mu.Lock()
		created[pod.Name] = time.Now()
		mu.Unlock()
		creates.Go(func() {
			if _, err := suite.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				errc <- err
			}
			returned[i] = time.Now()
		})
	}
	creates.Wait()
	createWall := time.Since(wallStart)
	close(errc)
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
	}
	mu.Lock()
	got := len(latencies)
	mu.Unlock()
	if got < n {
		// Timed out, or the apiserver ended the watch early (it does
		// under load).
		b.Fatalf("only %d of %d pods seen Ready", got, n)
	}
	wallBurst := time.Since(wallStart)
	steps := startSteps(b)
	requests := apiRequests(ctx, b)
	burstCPU := cpuSeconds(kubeletPID) - cpuStart
	burstCDCPU := cpuSeconds(containerdPID) - cdCPUStart
	loadBurst := loadAverage()
	busyRSS := rssMiB(kubeletPID)
	// Steady state: the pods run, nothing changes.
	steady := time.Duration(envInt("KUBELET_BENCH_STEADY", 20)) * time.Second
	var steadyProfile chan []byte
	if dir := os.Getenv("KUBELET_BENCH_PROFILE"); dir != "" {
		// The kubelet profiles one thing at a time: the burst's profile
		// ends before the steady one starts.
		path := fmt.Sprintf("%s/kubelet-%dpods-%dpersec.pprof", dir, n, rate)
		if err := os.WriteFile(path, <-profile, 0o644); err == nil {
			fmt.Printf("CPU profile: %s\n", path)
		}
		steadyProfile = make(chan []byte, 1)
		go func() {
			_, body := kubeletGetWithin(b, suite.apiClient, fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(steady.Seconds())), steady+30*time.Second)
			steadyProfile <- body
		}()
	}
	cpuSteady0, cdSteady0, wallSteady0 := cpuSeconds(kubeletPID), cpuSeconds(containerdPID), time.Now()
	time.Sleep(steady)
	steadyCPU := (cpuSeconds(kubeletPID) - cpuSteady0) / time.Since(wallSteady0).Seconds() * 100
	steadyCDCPU := (cpuSeconds(containerdPID) - cdSteady0) / time.Since(wallSteady0).Seconds() * 100
	busyRSS = max(busyRSS, rssMiB(kubeletPID))
	if steadyProfile != nil {
		path := fmt.Sprintf("%s/kubelet-%dpods-steady.pprof", os.Getenv("KUBELET_BENCH_PROFILE"), n)
		if err := os.WriteFile(path, <-steadyProfile, 0o644); err == nil {
			fmt.Printf("CPU profile: %s\n", path)
		}
	}

	if path := os.Getenv("KUBELET_BENCH_TRACE"); path != "" {
		// name, create and Ready times (Unix ns), then create returns.
		for i, t := range returned {
			trace = append(trace, fmt.Sprintf("returned p%03d %d", i, t.UnixNano()))
		}
		_ = os.WriteFile(fmt.Sprintf("%s-%dpods-%dpersec", path, n, rate), []byte(strings.Join(trace, "\n")+"\n"), 0o644)
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	pct := func(q float64) time.Duration {
		return latencies[min(len(latencies)-1, int(q*float64(len(latencies))))]
	}
	b.ReportMetric(pct(0.5).Seconds(), "p50-s")
	b.ReportMetric(pct(0.99).Seconds(), "p99-s")
	b.ReportMetric(latencies[len(latencies)-1].Seconds(), "max-s")
	b.ReportMetric(busyRSS, "rss-MiB")
	b.ReportMetric(steadyCPU, "steady-cpu-%")
	b.ReportMetric(burstCPU/float64(n)*1000, "kubelet-cpu-ms/pod")
	fmt.Printf("kubelet pod start-up: %d pods at %d/s (all created in %.1fs): create→Running+Ready p50 %.2fs p99 %.2fs max %.2fs (load average before %s, after %s)\n",
		n, rate, createWall.Seconds(), pct(0.5).Seconds(), pct(0.99).Seconds(), latencies[len(latencies)-1].Seconds(), loadStart, loadBurst)
	// The kubelet's steps in the order a pod goes through them, then any
	// others.
	order := []string{"wait", "observe", "volumes", "sandboxConfig", "sandboxSlot", "runPodSandbox", "sandboxStatus",
		"image", "containerConfig", "createContainer", "startContainer", "reobserve", "computeStatus", "writeStatus"}
	for _, name := range slices.Sorted(maps.Keys(steps)) {
		if !slices.Contains(order, name) {
			order = append(order, name)
		}
	}
	fmt.Printf("  kubelet start-up steps, mean time each took:")
	for _, name := range order {
		d := steps[name]
		d0 := steps0[name]
		if n := d[1] - d0[1]; n > 0 {
			fmt.Printf(" %s %.3fs", name, (d[0]-d0[0])/n)
		}
	}
	fmt.Println()
	// What the burst asked of the apiserver, per pod: the bench's creates
	// and watch, and the kubelet's status writes, events and reads.
	fmt.Printf("  apiserver requests per pod:")
	for _, key := range slices.Sorted(maps.Keys(requests)) {
		if d := requests[key] - requests0[key]; d > 0 {
			fmt.Printf(" %s %.2f", key, d/float64(n))
		}
	}
	fmt.Println()
	fmt.Printf("  kubelet RSS %.0f MiB before, %.0f MiB with %d pods; CPU while starting them %.2fs (%.1f ms/pod, %.1f%% of one core over %.1fs), containerd %.2fs; steady with %d pods %.2f%% of one core over %s (containerd %.2f%%)\n",
		startRSS, busyRSS, n, burstCPU, burstCPU/float64(n)*1000, burstCPU/wallBurst.Seconds()*100, wallBurst.Seconds(), burstCDCPU, n, steadyCPU, steady, steadyCDCPU)
}

// startSteps reads the kubelet's pod_start_step_duration_seconds
// histogram from its /metrics: the sum and count of each step.
func startSteps(b *testing.B) map[string][2]float64 {
	_, body := kubeletGetWithin(b, suite.apiClient, "/metrics", 30*time.Second)
	out := map[string][2]float64{}
	for _, m := range metricFamilies(b, body)["trireme_kubelet_pod_start_step_duration_seconds"].GetMetric() {
		h := m.GetHistogram()
		out[labels(m)["step"]] = [2]float64{h.GetSampleSum(), float64(h.GetSampleCount())}
	}
	return out
}

// apiRequests reads the apiserver's apiserver_request_total counters,
// keyed "verb resource[/subresource]".
func apiRequests(ctx context.Context, b *testing.B) map[string]float64 {
	body, err := suite.client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		b.Fatalf("apiserver metrics: %v", err)
	}
	out := map[string]float64{}
	for _, m := range metricFamilies(b, body)["apiserver_request_total"].GetMetric() {
		l := labels(m)
		key := l["verb"] + " " + l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		out[key] += m.GetCounter().GetValue()
	}
	return out
}

// metricFamilies parses a /metrics body in the Prometheus text format.
func metricFamilies(b *testing.B, body []byte) map[string]*dto.MetricFamily {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		b.Fatalf("parse metrics: %v", err)
	}
	return families
}

// labels returns m's labels by name.
func labels(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

// sandboxes counts the runtime's sandboxes, ready or not (-1 on error).
func sandboxes(ctx context.Context, rs cri.RuntimeService) int {
	l, err := rs.ListPodSandbox(ctx, nil)
	if err != nil {
		return -1
	}
	return len(l)
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
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
