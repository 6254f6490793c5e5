// Command schedload measures a Kubernetes scheduler in the spirit of
// upstream's scheduler_perf: against a real apiserver it creates nodes as
// API objects (marked Ready, as the node lifecycle controller would), starts
// the scheduler under test (any scheduler: a command line), creates pods and
// watches them bound. It prints pods scheduled per second, the p50/p90/p99
// latency from creation to binding, the scheduler's CPU and peak RSS, and a
// placement-quality figure (how evenly pods spread over nodes or zones).
// It asserts nothing about time.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"trireme.dev/e2e/internal/load"
)

type config struct {
	kubeconfig    string
	scenario      string
	nodes, pods   int
	workers       int
	zones         int
	scheduler     string
	schedulerArgs string
	timeout       time.Duration
	// backlog creates every pod before starting the scheduler, so the
	// figure is the scheduler's own rate rather than the creation rate.
	backlog bool
}

const namespace = "schedload"

func main() {
	var c config
	flag.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig of the apiserver (an identity allowed to create nodes and pods)")
	flag.StringVar(&c.scenario, "scenario", "basic", "basic, spread (zone topology spread, skew 1), antiaffinity (required hostname anti-affinity), preferred (preferred node affinity), preemption (every node full of low-priority pods; high-priority pods preempt them) or churn (mixed pods while nodes and other pods come and go)")
	flag.IntVar(&c.nodes, "nodes", 5000, "nodes to create")
	flag.IntVar(&c.pods, "pods", 10000, "pods to create and have scheduled (at most one per node with antiaffinity and preemption)")
	flag.IntVar(&c.workers, "workers", 50, "concurrent creating clients")
	flag.IntVar(&c.zones, "zones", 10, "zones the nodes are spread over")
	flag.StringVar(&c.scheduler, "scheduler", "", "scheduler binary to start once the nodes exist (empty: one is already running)")
	flag.StringVar(&c.schedulerArgs, "scheduler-args", "", "its arguments, space separated; {kubeconfig} is replaced")
	flag.DurationVar(&c.timeout, "timeout", 10*time.Minute, "give up after this long")
	flag.BoolVar(&c.backlog, "backlog", false, "create all pods first, then start the scheduler (measures the scheduler, not pod creation)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintln(os.Stderr, "schedload:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config) (err error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		return err
	}
	// Client-side rate limits would measure the driver.
	cfg.QPS, cfg.Burst = 100000, 100000
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.WarningHandler = rest.NoWarnings{}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if !knownScenarios[c.scenario] {
		return fmt.Errorf("unknown scenario %q", c.scenario)
	}
	if (c.scenario == "antiaffinity" || c.scenario == "preemption") && c.pods > c.nodes {
		c.pods = c.nodes
	}
	if err := setupNamespace(ctx, cs); err != nil {
		return err
	}
	t := time.Now()
	if err := createNodes(ctx, cs, c); err != nil {
		return err
	}
	fmt.Printf("schedload: scenario %s: %d nodes created in %v\n", c.scenario, c.nodes, time.Since(t).Round(time.Millisecond))
	if c.scenario == "preemption" {
		t := time.Now()
		if err := setupPreemption(ctx, cs, c); err != nil {
			return err
		}
		fmt.Printf("schedload: %d low-priority pods filling the nodes created in %v\n", c.pods, time.Since(t).Round(time.Millisecond))
	}

	var proc *exec.Cmd
	var logName string
	start := func() error {
		if c.scheduler == "" {
			return nil
		}
		args := strings.Fields(strings.ReplaceAll(c.schedulerArgs, "{kubeconfig}", c.kubeconfig))
		proc = exec.Command(c.scheduler, args...)
		logf, err := os.CreateTemp("", "schedload-scheduler-*.log")
		if err != nil {
			return err
		}
		logName = logf.Name()
		proc.Stdout, proc.Stderr = logf, logf
		proc.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := proc.Start(); err != nil {
			return fmt.Errorf("start scheduler: %w", err)
		}
		fmt.Printf("schedload: started %s (pid %d), log %s\n", c.scheduler, proc.Process.Pid, logf.Name())
		return nil
	}
	defer func() {
		if proc != nil {
			stopProcess(proc)
		}
		// The scheduler's log is kept only to explain a failure.
		if logName != "" && err == nil {
			_ = os.Remove(logName)
		}
	}()
	if !c.backlog {
		if err := start(); err != nil {
			return err
		}
		// A first pod bound means the scheduler is up with warm caches.
		if err := warmUp(ctx, cs); err != nil {
			return err
		}
	}
	var res *result
	res, err = measure(ctx, cs, c, start)
	if err != nil {
		return err
	}
	if proc != nil {
		res.cpu, _ = cpuSeconds(proc.Process.Pid)
		if m, err := load.ReadMemory(proc.Process.Pid); err == nil {
			res.mem = m
		}
	}
	res.print(c)
	// A placement a scheduler must never make fails the run (and keeps
	// the scheduler's log to explain it).
	return res.violation(c)
}

// violation reports hard constraints the placement broke: two pods on a
// node despite their required anti-affinity, or zones further apart than
// the DoNotSchedule spread's maxSkew of 1.
func (r *result) violation(c config) error {
	switch c.scenario {
	case "antiaffinity":
		var crowded []string
		for node, n := range r.perNode {
			if n > 1 {
				crowded = append(crowded, fmt.Sprintf("%s (%d)", node, n))
			}
		}
		if len(crowded) > 0 {
			sort.Strings(crowded)
			return fmt.Errorf("required anti-affinity broken on %d nodes: %s", len(crowded), strings.Join(crowded[:min(len(crowded), 10)], ", "))
		}
	case "spread":
		if lo, hi, _ := spreadOf(r.perZone, c.zones); hi-lo > 1 {
			return fmt.Errorf("zone spread broken: %d to %d pods per zone, max skew 1", lo, hi)
		}
	}
	return nil
}

func setupNamespace(ctx context.Context, cs kubernetes.Interface) error {
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace: %w", err)
	}
	// ServiceAccount admission wants the default ServiceAccount, which a
	// controller-manager would make.
	sa := &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create default ServiceAccount: %w", err)
	}
	return nil
}

// parallel runs f(i) for i in [0, n) on workers goroutines, returning the
// first error.
func parallel(n, workers int, f func(i int) error) error {
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

func nodeName(i int) string { return fmt.Sprintf("schedload-node-%05d", i) }

func createNodes(ctx context.Context, cs kubernetes.Interface, c config) error {
	capacity := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse("32"),
		v1.ResourceMemory: resource.MustParse("128Gi"),
		v1.ResourcePods:   resource.MustParse("110"),
	}
	return parallel(c.nodes, c.workers, func(i int) error {
		name := nodeName(i)
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			v1.LabelHostname:             name,
			v1.LabelTopologyZone:         fmt.Sprintf("zone-%d", i%c.zones),
			v1.LabelOSStable:             "linux",
			v1.LabelArchStable:           "amd64",
			"schedload.trireme.dev/node": "true",
		}}}
		created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			created, err = cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		}
		if err != nil {
			return fmt.Errorf("create node %s: %w", name, err)
		}
		created.Status = v1.NodeStatus{
			Capacity: capacity, Allocatable: capacity, Phase: v1.NodeRunning,
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		}
		updated, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
		if err != nil {
			return fmt.Errorf("mark node %s ready: %w", name, err)
		}
		var kept []v1.Taint
		for _, t := range updated.Spec.Taints {
			if t.Key != v1.TaintNodeNotReady && t.Key != v1.TaintNodeUnreachable {
				kept = append(kept, t)
			}
		}
		if len(kept) != len(updated.Spec.Taints) {
			updated.Spec.Taints = kept
			if _, err := cs.CoreV1().Nodes().Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("untaint node %s: %w", name, err)
			}
		}
		return nil
	})
}

func basePod(name string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "schedload"}},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
				v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("64Mi"),
			}}}},
			// No kubelet runs: nothing will mount a token.
			AutomountServiceAccountToken: new(false),
		},
	}
}

func scenarioPod(c config, i int) *v1.Pod {
	p := basePod(fmt.Sprintf("pod-%06d", i))
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "schedload"}}
	switch c.scenario {
	case "spread":
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: sel}}
	case "antiaffinity":
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{LabelSelector: sel, TopologyKey: v1.LabelHostname}}}}
	case "preferred":
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{
			Weight:     10,
			Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: preferredZones}}},
		}}}}
	case "preemption":
		p.Spec.PriorityClassName = highPriority
		p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse(highCPU)
	case "churn":
		// A mix of what real workloads ask for.
		switch i % 3 {
		case 1:
			c2 := c
			c2.scenario = "preferred"
			p.Spec.Affinity = scenarioPod(c2, i).Spec.Affinity
		case 2:
			p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: sel}}
		}
	}
	return p
}

// preferredZones are the zones the preferred scenario's pods prefer.
var preferredZones = []string{"zone-0", "zone-1"}

func warmUp(ctx context.Context, cs kubernetes.Interface) error {
	p := basePod("warmup")
	p.Labels = map[string]string{"app": "warmup"}
	if _, err := cs.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create warm-up pod: %w", err)
	}
	for {
		got, err := cs.CoreV1().Pods(namespace).Get(ctx, "warmup", metav1.GetOptions{})
		if err == nil && got.Spec.NodeName != "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.New("the warm-up pod was never scheduled: is the scheduler running?")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

type result struct {
	pods                  int
	firstCreate, lastBind time.Time
	lastCreate            time.Time
	latencies             []time.Duration
	perNode               map[string]int
	perZone               map[string]int
	schedulerStart        time.Time
	firstBind             time.Time
	cpu                   float64
	mem                   load.Memory
	// victims counts low-priority pods the preemption scenario saw evicted.
	victims atomic.Int64
	// churn counts the background operations of the churn scenario.
	churn int
	// inPreferred counts pods bound in preferredZones.
	inPreferred int
}

func measure(ctx context.Context, cs kubernetes.Interface, c config, startScheduler func() error) (*result, error) {
	list, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, err
	}
	rv := list.ResourceVersion
	r := &result{pods: c.pods, perNode: map[string]int{}, perZone: map[string]int{}}
	var mu sync.Mutex
	created := make(map[string]time.Time, c.pods)
	bound := make(map[string]time.Time, c.pods)
	done := make(chan error, 1)
	go func() { done <- watchBindings(ctx, cs, rv, &mu, bound, r, c.pods) }()

	bg, stopBackground := context.WithCancel(ctx)
	var bgDone sync.WaitGroup
	defer func() {
		stopBackground()
		bgDone.Wait()
	}()
	if c.scenario == "preemption" {
		// Nothing else here ends the victims' graceful deletion.
		bgDone.Add(1)
		go func() {
			defer bgDone.Done()
			reapVictims(bg, cs, &r.victims)
		}()
	}
	if c.scenario == "churn" {
		bgDone.Add(1)
		go func() {
			defer bgDone.Done()
			r.churn = churn(bg, cs, c)
		}()
	}
	r.firstCreate = time.Now()
	err = parallel(c.pods, c.workers, func(i int) error {
		p := scenarioPod(c, i)
		t := time.Now()
		if _, err := cs.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create pod %s: %w", p.Name, err)
		}
		mu.Lock()
		created[p.Name] = t
		mu.Unlock()
		return nil
	})
	r.lastCreate = time.Now()
	if err != nil {
		return nil, err
	}
	if c.backlog {
		r.schedulerStart = time.Now()
		if err := startScheduler(); err != nil {
			return nil, err
		}
	}
	select {
	case err := <-done:
		if err != nil {
			return nil, err
		}
	case <-ctx.Done():
		mu.Lock()
		n := len(bound)
		mu.Unlock()
		return nil, fmt.Errorf("only %d of %d pods bound before the timeout", n, c.pods)
	}
	mu.Lock()
	defer mu.Unlock()
	r.latenciesOf(created, bound)
	stopBackground()
	bgDone.Wait()
	r.countZones(c)
	return r, nil
}

// latenciesOf records each pod's time from creation to binding, sorted,
// and the first and last binding.
func (r *result) latenciesOf(created, bound map[string]time.Time) {
	for name, b := range bound {
		if b.After(r.lastBind) {
			r.lastBind = b
		}
		if r.firstBind.IsZero() || b.Before(r.firstBind) {
			r.firstBind = b
		}
		if t, ok := created[name]; ok {
			r.latencies = append(r.latencies, b.Sub(t))
		}
	}
	sort.Slice(r.latencies, func(i, j int) bool { return r.latencies[i] < r.latencies[j] })
}

// countZones sums the pods per zone (node i is in zone i mod zones) and
// in the preferred zones.
func (r *result) countZones(c config) {
	for node, n := range r.perNode {
		i, _ := strconv.Atoi(strings.TrimPrefix(node, "schedload-node-"))
		zone := fmt.Sprintf("zone-%d", i%c.zones)
		r.perZone[zone] += n
		if slices.Contains(preferredZones, zone) {
			r.inPreferred += n
		}
	}
}

// watchBindings records bindings until want pods are bound or ctx ends.
// The server may end a watch at any time; it resumes from the last
// resource version seen.
func watchBindings(ctx context.Context, cs kubernetes.Interface, rv string, mu *sync.Mutex, bound map[string]time.Time, r *result, want int) error {
	for ctx.Err() == nil {
		w, err := cs.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, LabelSelector: "app=schedload", AllowWatchBookmarks: true})
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if consume(w, &rv, mu, bound, r, want) {
			return nil
		}
	}
	return ctx.Err()
}

// consume records bindings from one watch; it reports whether every pod
// is bound.
func consume(w watch.Interface, rv *string, mu *sync.Mutex, bound map[string]time.Time, r *result, want int) bool {
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			return false
		}
		p, ok := ev.Object.(*v1.Pod)
		if !ok {
			continue
		}
		*rv = p.ResourceVersion
		if p.Spec.NodeName == "" {
			continue
		}
		now := time.Now()
		mu.Lock()
		if _, seen := bound[p.Name]; !seen {
			bound[p.Name] = now
			r.perNode[p.Spec.NodeName]++
		}
		n := len(bound)
		mu.Unlock()
		if n == want {
			return true
		}
	}
	return false
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(math.Ceil(p*float64(len(sorted))))-1)]
}

// spreadOf returns min, max and the coefficient of variation of counts
// over n buckets (buckets without pods count as 0).
func spreadOf(counts map[string]int, n int) (int, int, float64) {
	vals := make([]float64, 0, n)
	lo, hi := math.MaxInt, 0
	for _, v := range counts {
		vals = append(vals, float64(v))
		lo, hi = min(lo, v), max(hi, v)
	}
	for len(vals) < n {
		vals = append(vals, 0)
		lo = 0
	}
	var sum float64
	for _, v := range vals {
		sum += v
	}
	mean := sum / float64(len(vals))
	var sq float64
	for _, v := range vals {
		sq += (v - mean) * (v - mean)
	}
	if mean == 0 {
		return lo, hi, 0
	}
	return lo, hi, math.Sqrt(sq/float64(len(vals))) / mean
}

func (r *result) print(c config) {
	total := r.lastBind.Sub(r.firstCreate)
	fmt.Printf("schedload: %d pods created in %v (%.0f pods/s)\n", r.pods, r.lastCreate.Sub(r.firstCreate).Round(time.Millisecond), float64(r.pods)/r.lastCreate.Sub(r.firstCreate).Seconds())
	if c.backlog {
		total = r.lastBind.Sub(r.schedulerStart)
		binding := r.lastBind.Sub(r.firstBind)
		fmt.Printf("schedload: backlog of %d pods scheduled in %v from scheduler start (%.1f pods/s), %v from first to last binding: %.1f pods/s\n",
			r.pods, total.Round(time.Millisecond), float64(r.pods)/total.Seconds(), binding.Round(time.Millisecond), float64(r.pods)/binding.Seconds())
	} else {
		fmt.Printf("schedload: %d pods scheduled in %v: %.1f pods/s (first creation to last binding)\n", r.pods, total.Round(time.Millisecond), float64(r.pods)/total.Seconds())
	}
	fmt.Printf("schedload: creation-to-binding latency p50 %v p90 %v p99 %v max %v\n",
		percentile(r.latencies, 0.50).Round(time.Millisecond), percentile(r.latencies, 0.90).Round(time.Millisecond),
		percentile(r.latencies, 0.99).Round(time.Millisecond), percentile(r.latencies, 1).Round(time.Millisecond))
	if r.cpu > 0 {
		fmt.Printf("schedload: scheduler CPU %.1f s in all (start-up included), %s\n", r.cpu, r.mem)
	}
	lo, hi, cv := spreadOf(r.perNode, c.nodes)
	fmt.Printf("schedload: placement: pods per node min %d max %d (coefficient of variation %.3f; 0 is perfectly even)\n", lo, hi, cv)
	zlo, zhi, zcv := spreadOf(r.perZone, c.zones)
	fmt.Printf("schedload: placement: pods per zone min %d max %d (coefficient of variation %.3f)\n", zlo, zhi, zcv)
	fmt.Printf("schedload: quality: %s\n", r.quality(c))
}

// quality is the scenario's own placement score, the figure to compare
// between schedulers.
func (r *result) quality(c config) string {
	_, hi, cv := spreadOf(r.perNode, c.nodes)
	zlo, zhi, _ := spreadOf(r.perZone, c.zones)
	switch c.scenario {
	case "antiaffinity":
		return fmt.Sprintf("most pods on one node %d (1 means the anti-affinity held)", hi)
	case "spread":
		return fmt.Sprintf("zone skew %d (max skew 1 allowed)", zhi-zlo)
	case "preferred":
		return fmt.Sprintf("%.1f%% of pods in the preferred zones %v", 100*float64(r.inPreferred)/float64(max(r.pods, 1)), preferredZones)
	case "preemption":
		return fmt.Sprintf("%.2f victims per preemptor (1.00 is the fewest possible)", float64(r.victims.Load())/float64(max(r.pods, 1)))
	case "churn":
		return fmt.Sprintf("node balance coefficient of variation %.3f, zone skew %d, %d churn operations meanwhile", cv, zhi-zlo, r.churn)
	}
	return fmt.Sprintf("node balance coefficient of variation %.3f (0 is perfectly even), zone skew %d", cv, zhi-zlo)
}

// cpuSeconds reads a process's user+system time from /proc/<pid>/stat.
func cpuSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command (which may hold spaces) start after ')'.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / 100, nil // USER_HZ is 100 on Linux
}

// stopProcess ends the scheduler we started, by its PID only.
func stopProcess(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}
