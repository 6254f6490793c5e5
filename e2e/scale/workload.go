package scale

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testcluster"
	"trireme.dev/e2e/internal/kwok"
)

// Size is the workload's scale.
type Size struct {
	Nodes, Pods, Namespaces int
	// Deployments share Pods evenly; Services are ServicesPerDeployment
	// per Deployment, each selecting all its pods.
	Deployments, ServicesPerDeployment int
	// Watchers each hold a watch on every pod throughout.
	Watchers int
	// NotReadyPercent of nodes stop heartbeating.
	NotReadyPercent int
}

// IssueSize is issue 29's: 1,000 nodes, 30,000 pods through 300
// Deployments of 100 across 100 namespaces, 3,000 Services, 100 watchers.
var IssueSize = Size{Nodes: 1000, Pods: 30000, Namespaces: 100, Deployments: 300, ServicesPerDeployment: 10, Watchers: 100, NotReadyPercent: 2}

// Scaled returns IssueSize with nodes and pods replaced, keeping 100
// pods per Deployment where pods allow it.
func Scaled(nodes, pods, namespaces int) Size {
	s := IssueSize
	s.Nodes, s.Pods, s.Namespaces = nodes, pods, namespaces
	s.Deployments = max(1, pods/100)
	return s
}

// String states the size.
func (s Size) String() string {
	return fmt.Sprintf("%d nodes, %d pods in %d Deployments across %d namespaces (+1 holding 10%% of Deployments, deleted), %d Services, %d pod watchers, %d%% nodes NotReady",
		s.Nodes, s.Pods, s.Deployments, s.Namespaces, s.Deployments*s.ServicesPerDeployment, s.Watchers, s.NotReadyPercent)
}

const (
	bigNamespace  = "scale-big"
	tolerationSec = 30 // pods leave a NotReady node after this, the same for both
)

// Figures are what a run measured.
type Figures struct {
	Stages          []Stage
	AllRunning      time.Duration
	SchedThroughput float64 // pods bound per second, first to last bind
	RollingUpdate   time.Duration
	Eviction        time.Duration
	NamespaceDelete time.Duration
	GetPodsTable    time.Duration
	GetPodsJSON     time.Duration
	JSONBytes       int
	WatchEvents     int64
	Rewatches       int64
	EtcdDB          int64
	Peak, Settled   map[string]ProcStat
	Server, Client  []Latency
}

// Stage is one named step's duration.
type Stage struct {
	Name string
	Took time.Duration
}

// Run is one harness run against a control plane.
type Run struct {
	CP      *ControlPlane
	Size    Size
	Kwok    string // the kwok binary
	Stages  string // kwok's stage configuration (kwok.Locate's answer)
	Timeout time.Duration
	Log     func(format string, args ...any)

	cs        kubernetes.Interface
	client    *ClientLatencies
	fig       Figures
	bound     sync.Map // pod UID → time first seen bound
	events    atomic.Int64
	rewatches atomic.Int64
}

// Execute runs the workload. On a stage's failure the error names it and
// Figures holds what was measured until then.
func (r *Run) Execute(ctx context.Context) (*Figures, error) {
	r.client = NewClientLatencies()
	cfg := r.client.Wrap(r.CP.Config)
	cfg.QPS, cfg.Burst = 500, 1000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return &r.fig, fmt.Errorf("make client: %w", err)
	}
	r.cs = cs
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	kwok, err := r.startKwok()
	if err != nil {
		return &r.fig, err
	}
	defer func() {
		if err := kwok.Stop(testcluster.DefaultStopTimeout); err != nil {
			r.Log("stop kwok: %v", err)
		}
	}()
	if err := r.startWatchers(ctx); err != nil {
		return &r.fig, err
	}
	stages := []struct {
		name string
		run  func(context.Context) error
	}{
		{"nodes", r.createNodes},
		{"workload", r.createWorkload},
		{"endpointslices", r.waitEndpointSlices},
		{"list", r.listPods},
		{"rolling update", r.rollingUpdate},
		{"notready", r.notReady},
		{"namespace deletion", r.deleteNamespace},
	}
	for _, s := range stages {
		sctx, scancel := context.WithTimeout(ctx, r.Timeout)
		start := time.Now()
		err := s.run(sctx)
		scancel()
		took := time.Since(start)
		r.fig.Stages = append(r.fig.Stages, Stage{s.name, took})
		r.Log("stage %q done in %s (err: %v)", s.name, took.Round(time.Millisecond), err)
		if err != nil {
			r.collect(ctx, false)
			return &r.fig, fmt.Errorf("stage %q failed after %s: %w", s.name, took.Round(time.Second), err)
		}
	}
	r.collect(ctx, true)
	return &r.fig, nil
}

func (r *Run) startKwok() (*testcluster.Process, error) {
	p, err := kwok.Start(kwok.Options{Binary: r.Kwok, Stages: r.Stages, Kubeconfig: r.CP.Kubeconfig, Dir: r.CP.dir, Out: prefixWriter{r.Log, "kwok"}})
	if err != nil {
		return nil, err
	}
	r.CP.PIDs["kwok"] = p.PID()
	return p, nil
}

// prefixWriter forwards kwok's error lines to the run's log.
type prefixWriter struct {
	log    func(string, ...any)
	prefix string
}

func (w prefixWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimSpace(string(p)), "\n") {
		if strings.Contains(line, "level=ERROR") || strings.Contains(line, "panic") {
			w.log("%s: %s", w.prefix, line)
		}
	}
	return len(p), nil
}

// startWatchers holds Size.Watchers watches on every pod; the first also
// records when each pod is first seen bound, for the scheduler's throughput.
// A watch the apiserver closes (a slow consumer's, or at its timeout) is
// opened again and counted, so that every client watches throughout.
func (r *Run) startWatchers(ctx context.Context) error {
	for i := range r.Size.Watchers {
		w, err := r.cs.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{AllowWatchBookmarks: true})
		if err != nil {
			return fmt.Errorf("start watcher %d: %w", i, err)
		}
		go func() {
			for {
				r.drain(w, i == 0)
				if ctx.Err() != nil {
					return
				}
				r.rewatches.Add(1)
				if w = r.reopen(ctx); w == nil {
					return
				}
			}
		}()
	}
	return nil
}

// reopen opens a pod watch again, retrying every second until ctx ends
// (then it returns nil).
func (r *Run) reopen(ctx context.Context) watch.Interface {
	for {
		w, err := r.cs.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{AllowWatchBookmarks: true})
		if err == nil {
			return w
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

// drain counts w's events until it closes.
func (r *Run) drain(w watch.Interface, recordBinds bool) {
	defer w.Stop()
	for ev := range w.ResultChan() {
		r.events.Add(1)
		if !recordBinds || ev.Type == watch.Bookmark || ev.Type == watch.Error {
			continue
		}
		if pod, ok := ev.Object.(*corev1.Pod); ok && pod.Spec.NodeName != "" {
			r.bound.LoadOrStore(pod.UID, time.Now())
		}
	}
}

// parallel runs f(0..n-1) on 50 workers, returning the first error.
func parallel(ctx context.Context, n int, f func(context.Context, int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range min(50, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(ctx, i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	return first
}

func nodeName(i int) string { return fmt.Sprintf("kwok-node-%04d", i) }

func (r *Run) createNodes(ctx context.Context) error {
	if err := parallel(ctx, r.Size.Nodes, func(ctx context.Context, i int) error {
		n := kwok.Node(nodeName(i))
		if _, err := r.cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create node %s: %w", n.Name, err)
		}
		return nil
	}); err != nil {
		return err
	}
	return r.poll(ctx, "nodes Ready", func(ctx context.Context) (bool, string, error) {
		ready, err := kwok.ReadyNodes(ctx, r.cs)
		return ready >= r.Size.Nodes, fmt.Sprintf("%d/%d Ready", ready, r.Size.Nodes), err
	})
}

// poll calls f every 2 s until it reports done, logging its progress every
// 30 s and on failure.
func (r *Run) poll(ctx context.Context, what string, f func(context.Context) (bool, string, error)) error {
	last, lastLog := "", time.Now()
	for {
		done, progress, err := f(ctx)
		if err == nil && done {
			return nil
		}
		if err != nil {
			progress = err.Error()
		}
		last = progress
		if time.Since(lastLog) > 30*time.Second {
			r.Log("waiting for %s: %s", what, last)
			lastLog = time.Now()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %s (%w)", what, last, ctx.Err())
		case <-time.After(2 * time.Second):
		}
	}
}

// namespaceOf puts the first tenth of Deployments in bigNamespace and
// spreads the rest.
func (r *Run) namespaceOf(d int) string {
	if d < r.Size.Deployments/10 {
		return bigNamespace
	}
	return fmt.Sprintf("scale-%03d", d%r.Size.Namespaces)
}

func (r *Run) replicas(d int) int32 {
	n := r.Size.Pods / r.Size.Deployments
	if d < r.Size.Pods%r.Size.Deployments {
		n++
	}
	return int32(n)
}

func (r *Run) createWorkload(ctx context.Context) error {
	start := time.Now()
	namespaces := []string{bigNamespace}
	for i := range r.Size.Namespaces {
		namespaces = append(namespaces, fmt.Sprintf("scale-%03d", i))
	}
	if err := parallel(ctx, len(namespaces), func(ctx context.Context, i int) error {
		_, err := r.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespaces[i]}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s: %w", namespaces[i], err)
		}
		return nil
	}); err != nil {
		return err
	}
	// ServiceAccount admission refuses pods until the namespace's default
	// ServiceAccount exists.
	if err := r.poll(ctx, "default ServiceAccounts", func(ctx context.Context) (bool, string, error) {
		sas, err := r.cs.CoreV1().ServiceAccounts("").List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=default"})
		if err != nil {
			return false, "", err
		}
		return len(sas.Items) >= len(namespaces)+4, fmt.Sprintf("%d", len(sas.Items)), nil
	}); err != nil {
		return err
	}
	if err := parallel(ctx, r.Size.Deployments, func(ctx context.Context, d int) error {
		ns, name := r.namespaceOf(d), fmt.Sprintf("app-%04d", d)
		if _, err := r.cs.AppsV1().Deployments(ns).Create(ctx, deployment(name, r.replicas(d)), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create deployment %s/%s: %w", ns, name, err)
		}
		for s := range r.Size.ServicesPerDeployment {
			svc := &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-svc-%02d", name, s)},
				Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name},
					Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
			}
			if _, err := r.cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create service %s/%s: %w", ns, svc.Name, err)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	r.Log("created %d Deployments and %d Services in %s", r.Size.Deployments, r.Size.Deployments*r.Size.ServicesPerDeployment, time.Since(start).Round(time.Millisecond))
	err := r.poll(ctx, "pods Running", func(ctx context.Context) (bool, string, error) {
		running, err := kwok.RunningPods(ctx, r.cs, "")
		return running >= r.Size.Pods, fmt.Sprintf("%d/%d Running", running, r.Size.Pods), err
	})
	r.fig.AllRunning = time.Since(start)
	var first, last time.Time
	n := 0
	r.bound.Range(func(_, v any) bool {
		t := v.(time.Time)
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
		n++
		return true
	})
	if n > 1 && last.After(first) {
		r.fig.SchedThroughput = float64(n) / last.Sub(first).Seconds()
	}
	return err
}

func deployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "app", Image: "trireme.dev/pause:scale",
						Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}}}},
					// Leave a NotReady node after tolerationSec rather than
					// the default 300 s, for both control planes alike.
					Tolerations: []corev1.Toleration{
						{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](tolerationSec)},
						{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](tolerationSec)},
					},
				},
			},
		},
	}
}

// waitEndpointSlices waits until every Service's slices hold all its
// Deployment's pods as ready endpoints.
func (r *Run) waitEndpointSlices(ctx context.Context) error {
	want := 0
	for d := range r.Size.Deployments {
		want += int(r.replicas(d)) * r.Size.ServicesPerDeployment
	}
	return r.poll(ctx, "EndpointSlices", func(ctx context.Context) (bool, string, error) {
		slices, err := r.cs.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{ResourceVersion: "0", LabelSelector: discoveryv1.LabelServiceName})
		if err != nil {
			return false, "", err
		}
		ready := 0
		for _, s := range slices.Items {
			if !strings.HasPrefix(s.Namespace, "scale-") {
				continue
			}
			for _, e := range s.Endpoints {
				if e.Conditions.Ready != nil && *e.Conditions.Ready {
					ready++
				}
			}
		}
		return ready >= want, fmt.Sprintf("%d/%d ready endpoints in %d slices", ready, want, len(slices.Items)), nil
	})
}

// listPods times kubectl get pods -A, as a table and as JSON.
func (r *Run) listPods(ctx context.Context) error {
	for _, out := range []string{"", "json"} {
		args := []string{"--kubeconfig", r.CP.Kubeconfig, "get", "pods", "-A"}
		if out != "" {
			args = append(args, "-o", out)
		}
		kubectl, err := testcluster.KubectlPath()
		if err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, kubectl, args...)
		var n countWriter
		cmd.Stdout = &n
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("kubectl %s: %w", strings.Join(args[2:], " "), err)
		}
		if out == "" {
			r.fig.GetPodsTable = time.Since(start)
		} else {
			r.fig.GetPodsJSON, r.fig.JSONBytes = time.Since(start), int(n)
		}
	}
	return nil
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

// rollingUpdate changes every Deployment's template and waits until each
// has rolled out completely.
func (r *Run) rollingUpdate(ctx context.Context) error {
	start := time.Now()
	patch := []byte(fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"scale.trireme.dev/rollout":"%d"}}}}}`, start.Unix()))
	if err := parallel(ctx, r.Size.Deployments, func(ctx context.Context, d int) error {
		_, err := r.cs.AppsV1().Deployments(r.namespaceOf(d)).Patch(ctx, fmt.Sprintf("app-%04d", d), types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		if err != nil {
			return fmt.Errorf("patch deployment app-%04d: %w", d, err)
		}
		return nil
	}); err != nil {
		return err
	}
	err := r.waitDeployments(ctx, "rollout", true)
	r.fig.RollingUpdate = time.Since(start)
	return err
}

// waitDeployments waits until every Deployment is available at full size
// (and, with updated, entirely on its newest template).
func (r *Run) waitDeployments(ctx context.Context, what string, updated bool) error {
	return r.poll(ctx, what, func(ctx context.Context) (bool, string, error) {
		ds, err := r.cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return false, "", err
		}
		done := 0
		for _, d := range ds.Items {
			want := *d.Spec.Replicas
			s := d.Status
			if s.ObservedGeneration >= d.Generation && s.AvailableReplicas == want && s.ReadyReplicas == want &&
				(!updated || (s.UpdatedReplicas == want && s.Replicas == want)) {
				done++
			}
		}
		return done >= r.Size.Deployments, fmt.Sprintf("%d/%d Deployments done", done, r.Size.Deployments), nil
	})
}

// notReady stops kwok managing NotReadyPercent of nodes, so that their
// leases expire, and waits until their pods are evicted and running again
// elsewhere.
func (r *Run) notReady(ctx context.Context) error {
	n := max(1, r.Size.Nodes*r.Size.NotReadyPercent/100)
	start := time.Now()
	patch := []byte(`{"metadata":{"labels":{"` + kwok.Label + `":"false"}}}`)
	if err := parallel(ctx, n, func(ctx context.Context, i int) error {
		_, err := r.cs.CoreV1().Nodes().Patch(ctx, nodeName(i), types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("unlabel nodes: %w", err)
	}
	failed := map[string]bool{}
	for i := range n {
		failed[nodeName(i)] = true
	}
	err := r.poll(ctx, "evictions", func(ctx context.Context) (bool, string, error) {
		pods, err := r.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return false, "", err
		}
		left, running := 0, 0
		for _, p := range pods.Items {
			switch {
			case failed[p.Spec.NodeName] && p.DeletionTimestamp == nil:
				left++
			case p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && !failed[p.Spec.NodeName]:
				running++
			}
		}
		return left == 0 && running >= r.Size.Pods, fmt.Sprintf("%d pods left on %d NotReady nodes, %d/%d Running elsewhere", left, n, running, r.Size.Pods), nil
	})
	r.fig.Eviction = time.Since(start)
	if err != nil {
		return err
	}
	// The nodes come back, as repaired machines do: until then nothing
	// finishes their evicted pods, which stay Terminating and would hold
	// up the namespace deletion that follows.
	patch = []byte(`{"metadata":{"labels":{"` + kwok.Label + `":"true"}}}`)
	if err := parallel(ctx, n, func(ctx context.Context, i int) error {
		_, err := r.cs.CoreV1().Nodes().Patch(ctx, nodeName(i), types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("relabel nodes: %w", err)
	}
	// Their evicted pods are finished as the returning kubelet would: kwok
	// does not revisit pods already Terminating on a node it takes back.
	pods, err := r.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	for _, p := range pods.Items {
		if failed[p.Spec.NodeName] && p.DeletionTimestamp != nil {
			err := r.cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("finish pod %s/%s: %w", p.Namespace, p.Name, err)
			}
		}
	}
	return nil
}

// deleteNamespace deletes bigNamespace and waits until it is gone.
func (r *Run) deleteNamespace(ctx context.Context) error {
	start := time.Now()
	if err := r.cs.CoreV1().Namespaces().Delete(ctx, bigNamespace, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete namespace %s: %w", bigNamespace, err)
	}
	err := r.poll(ctx, "namespace deletion", func(ctx context.Context) (bool, string, error) {
		_, err := r.cs.CoreV1().Namespaces().Get(ctx, bigNamespace, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, "namespace still there", err
	})
	r.fig.NamespaceDelete = time.Since(start)
	return err
}

// collect reads the figures: process peaks now, then (when settle) the
// settled RSS after 30 s, latencies, etcd's size.
func (r *Run) collect(ctx context.Context, settle bool) {
	r.fig.Peak = map[string]ProcStat{}
	r.fig.Settled = map[string]ProcStat{}
	read := func(into map[string]ProcStat) {
		for name, pid := range r.CP.PIDs {
			if pid == 0 {
				continue
			}
			if ps, err := ReadProcStat(pid); err == nil {
				into[name] = ps
			}
		}
	}
	read(r.fig.Peak)
	if settle {
		time.Sleep(30 * time.Second)
		read(r.fig.Settled)
	}
	r.fig.WatchEvents, r.fig.Rewatches = r.events.Load(), r.rewatches.Load()
	var err error
	if r.fig.Server, err = ServerLatencies(ctx, r.CP.Config, 10); err != nil {
		r.Log("server latencies: %v", err)
	}
	r.fig.Client = r.client.Latencies()
	if r.fig.EtcdDB, err = EtcdDBSize(ctx, r.CP.EtcdEndpoint); err != nil {
		r.Log("etcd size: %v", err)
	}
}

// Print writes the figures as a report.
func (f *Figures) Print(w io.Writer, cp Flavour, size Size, s Settings) {
	fmt.Fprintf(w, "\n=== scale: %s control plane\nsize: %s\nsettings: %s\n", cp, size, s)
	for _, st := range f.Stages {
		fmt.Fprintf(w, "stage %-20s %s\n", st.Name, st.Took.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "time to all pods Running:     %s\n", f.AllRunning.Round(time.Millisecond))
	fmt.Fprintf(w, "scheduler throughput:         %.1f pods/s (first to last bind seen by a watcher)\n", f.SchedThroughput)
	fmt.Fprintf(w, "rolling update (all):         %s\n", f.RollingUpdate.Round(time.Millisecond))
	fmt.Fprintf(w, "NotReady → pods rescheduled:  %s (toleration %ds)\n", f.Eviction.Round(time.Millisecond), tolerationSec)
	fmt.Fprintf(w, "namespace deletion:           %s\n", f.NamespaceDelete.Round(time.Millisecond))
	fmt.Fprintf(w, "kubectl get pods -A:          %s (table), %s (-o json, %d MB)\n", f.GetPodsTable.Round(time.Millisecond), f.GetPodsJSON.Round(time.Millisecond), f.JSONBytes>>20)
	fmt.Fprintf(w, "watch events received:        %d over all watchers, %d watches closed by the server and reopened\n", f.WatchEvents, f.Rewatches)
	fmt.Fprintf(w, "etcd db size:                 %.1f MiB\n", float64(f.EtcdDB)/(1<<20))
	fmt.Fprintf(w, "%-20s %12s %12s %12s\n", "component", "peak RSS", "settled RSS", "CPU s")
	var cpu time.Duration
	for _, c := range append(append([]string{}, Components...), "kwok") {
		p, ok := f.Peak[c]
		if !ok {
			continue
		}
		st := f.Settled[c]
		if c != "kwok" {
			cpu += max(p.CPU, st.CPU)
		}
		fmt.Fprintf(w, "%-20s %9.0f MiB %9.0f MiB %12.1f\n", c, float64(p.PeakRSS)/(1<<20), float64(st.RSS)/(1<<20), max(p.CPU, st.CPU).Seconds())
	}
	fmt.Fprintf(w, "control plane CPU (etcd, apiserver, controller-manager, scheduler): %.1f s\n", cpu.Seconds())
	for _, set := range []struct {
		name string
		l    []Latency
	}{{"apiserver histograms (apiserver_request_duration_seconds)", f.Server}, {"client side (the harness's requests, to response headers)", f.Client}} {
		fmt.Fprintf(w, "API latency, %s:\n%-8s %-36s %-9s %8s %10s %10s  %s\n", set.name, "verb", "resource", "scope", "count", "p50", "p99", "SLO")
		for _, l := range set.l {
			fmt.Fprintf(w, "%-8s %-36s %-9s %8d %10s %10s  %s\n", l.Verb, l.Resource, l.Scope, l.Count, l.P50.Round(time.Microsecond*100), l.P99.Round(time.Microsecond*100), l.Met())
		}
	}
}
