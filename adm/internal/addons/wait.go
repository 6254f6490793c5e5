package addons

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// Workload is a Deployment, DaemonSet or StatefulSet of an addon.
type Workload struct {
	Kind, Namespace, Name string
}

// Workloads groups the workloads of a rendered release manifest by addon (the
// subchart whose template made them, as Helm's "# Source:" lines name it).
func Workloads(manifest string) map[string][]Workload {
	out := map[string][]Workload{}
	for _, doc := range strings.Split(manifest, "\n---") {
		addon := ""
		for _, l := range strings.Split(doc, "\n") {
			if src, ok := strings.CutPrefix(strings.TrimSpace(l), "# Source: "); ok {
				// trireme-addons/charts/<addon>/templates/x.yaml
				if parts := strings.Split(src, "/"); len(parts) > 2 && parts[1] == "charts" {
					addon = parts[2]
				}
				break
			}
		}
		var obj struct {
			Kind     string            `json:"kind"`
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if addon == "" || yaml.Unmarshal([]byte(doc), &obj) != nil {
			continue
		}
		switch obj.Kind {
		case "Deployment", "DaemonSet", "StatefulSet":
			ns := obj.Metadata.Namespace
			if ns == "" {
				ns = Namespace
			}
			out[addon] = append(out[addon], Workload{Kind: obj.Kind, Namespace: ns, Name: obj.Metadata.Name})
		}
	}
	return out
}

// Result is how one addon's wait ended.
type Result struct {
	Addon string
	// Took is from the start of the wait to the addon's last workload ready.
	Took time.Duration
	// Err says why the addon is not ready, naming its pods' failures.
	Err error
}

// pollInterval is how often Wait looks at the workloads.
const pollInterval = 500 * time.Millisecond

// Wait waits, up to timeout, for every addon's workloads to be ready, and
// returns one Result per addon, sorted by name. An addon whose pods fail in a
// way waiting will not mend (crash loop, image missing, unschedulable) is
// reported at once rather than at the timeout.
func Wait(ctx context.Context, c kubernetes.Interface, workloads map[string][]Workload, timeout time.Duration) []Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	var (
		mu  sync.Mutex
		out []Result
		wg  sync.WaitGroup
	)
	for addon, ws := range workloads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := waitAddon(ctx, c, ws)
			mu.Lock()
			out = append(out, Result{Addon: addon, Took: time.Since(start), Err: err})
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].Addon < out[j].Addon })
	return out
}

// errFailing marks a failure that waiting will not mend.
var errFailing = errors.New("failing")

func waitAddon(ctx context.Context, c kubernetes.Interface, ws []Workload) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		var notReady []string
		for _, w := range ws {
			ok, why, err := ready(ctx, c, w)
			if errors.Is(err, errFailing) {
				return fmt.Errorf("%s %s/%s: %s", w.Kind, w.Namespace, w.Name, why)
			}
			if !ok {
				notReady = append(notReady, fmt.Sprintf("%s %s/%s: %s", w.Kind, w.Namespace, w.Name, why))
			}
		}
		if len(notReady) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready: %s", strings.Join(notReady, "; "))
		case <-t.C:
		}
	}
}

// ready reports whether w is rolled out and ready; when it is not, why says
// what it waits for, from its pods.
func ready(ctx context.Context, c kubernetes.Interface, w Workload) (bool, string, error) {
	var (
		selector   *metav1.LabelSelector
		ok         bool
		why        string
		generation int64
		observed   int64
	)
	switch w.Kind {
	case "Deployment":
		d, err := c.AppsV1().Deployments(w.Namespace).Get(ctx, w.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		selector, generation, observed = d.Spec.Selector, d.Generation, d.Status.ObservedGeneration
		ok = d.Status.UpdatedReplicas >= want && d.Status.AvailableReplicas >= want && d.Status.Replicas == d.Status.UpdatedReplicas
		why = fmt.Sprintf("%d of %d replicas available", d.Status.AvailableReplicas, want)
	case "DaemonSet":
		d, err := c.AppsV1().DaemonSets(w.Namespace).Get(ctx, w.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		s := d.Status
		selector, generation, observed = d.Spec.Selector, d.Generation, s.ObservedGeneration
		// No node to run on is done once the controller has seen this
		// generation (as kubectl rollout status has it): the flannel addon's
		// DaemonSet for a node that has not joined yet waits for nothing.
		ok = s.NumberReady >= s.DesiredNumberScheduled && s.UpdatedNumberScheduled >= s.DesiredNumberScheduled
		why = fmt.Sprintf("%d of %d pods ready", s.NumberReady, s.DesiredNumberScheduled)
	case "StatefulSet":
		s, err := c.AppsV1().StatefulSets(w.Namespace).Get(ctx, w.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		want := int32(1)
		if s.Spec.Replicas != nil {
			want = *s.Spec.Replicas
		}
		selector, generation, observed = s.Spec.Selector, s.Generation, s.Status.ObservedGeneration
		ok = s.Status.ReadyReplicas >= want && s.Status.UpdatedReplicas >= want
		why = fmt.Sprintf("%d of %d replicas ready", s.Status.ReadyReplicas, want)
	default:
		return false, "", fmt.Errorf("%w: kind %s is not a workload", errFailing, w.Kind)
	}
	if ok && observed >= generation {
		return true, "", nil
	}
	if podWhy, failing := podsFailing(ctx, c, w.Namespace, selector); podWhy != "" {
		if failing {
			return false, podWhy, errFailing
		}
		why += ": " + podWhy
	}
	return false, why, nil
}

// failingReasons are container states waiting will not mend.
var failingReasons = map[string]bool{
	"CrashLoopBackOff": true, "ErrImagePull": true, "ImagePullBackOff": true, "ErrImageNeverPull": true,
	"InvalidImageName": true, "CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
}

// unschedulableGrace is how long a pod may stay unschedulable before the
// addon counts as failing: the scheduler may be waiting for a node to turn Ready.
const unschedulableGrace = 20 * time.Second

// podsFailing describes the first pod of selector that is not ready, and
// whether its state is one waiting will not mend.
func podsFailing(ctx context.Context, c kubernetes.Interface, ns string, selector *metav1.LabelSelector) (string, bool) {
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil || sel.Empty() {
		return "", false
	}
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return "", false
	}
	return describePods(pods.Items, sel, time.Now())
}

func describePods(pods []corev1.Pod, sel labels.Selector, now time.Time) (string, bool) {
	for _, p := range pods {
		if !sel.Matches(labels.Set(p.Labels)) || p.DeletionTimestamp != nil {
			continue
		}
		for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
				msg := fmt.Sprintf("pod %s: container %s: %s", p.Name, cs.Name, w.Reason)
				if w.Message != "" {
					msg += ": " + w.Message
				}
				return msg, failingReasons[w.Reason]
			}
			if t := cs.State.Terminated; t != nil && t.ExitCode != 0 && cs.RestartCount >= 2 {
				return fmt.Sprintf("pod %s: container %s: exited %d (%s), %d restarts", p.Name, cs.Name, t.ExitCode, t.Reason, cs.RestartCount), true
			}
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse {
				return fmt.Sprintf("pod %s: %s: %s", p.Name, cond.Reason, cond.Message),
					cond.Reason == corev1.PodReasonUnschedulable && now.Sub(p.CreationTimestamp.Time) > unschedulableGrace
			}
		}
	}
	return "", false
}
