// Package pods holds what the workload controllers share about pods:
// readiness and availability as upstream defines them, pods made from a
// template, slow-start batched creation and the order in which pods are
// chosen for deletion.
package pods

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// DeletionCostAnnotation ranks pods for scale-down: lower cost goes first.
const DeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// Ready reports whether pod has condition Ready=True.
func Ready(pod *corev1.Pod) bool {
	c := Condition(pod, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

// Condition returns pod's condition of type t, or nil.
func Condition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// Available reports whether pod has been ready for at least minReadySeconds
// at now.
func Available(pod *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	c := Condition(pod, corev1.PodReady)
	if c == nil || c.Status != corev1.ConditionTrue {
		return false
	}
	if minReadySeconds == 0 {
		return true
	}
	d := time.Duration(minReadySeconds) * time.Second
	return !c.LastTransitionTime.IsZero() && !c.LastTransitionTime.Add(d).After(now)
}

// Terminal reports whether pod has finished (Succeeded or Failed).
func Terminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// Active reports whether pod counts as a replica: not finished, not
// deleting.
func Active(pod *corev1.Pod) bool {
	return !Terminal(pod) && pod.DeletionTimestamp == nil
}

// FilterActive returns the active pods of all.
func FilterActive(all []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range all {
		if Active(p) {
			out = append(out, p)
		}
	}
	return out
}

// FromTemplate returns a pod of template owned through ref, named from
// generateName prefix parentName plus a dash.
func FromTemplate(template *corev1.PodTemplateSpec, parentName string, ref *metav1.OwnerReference) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Labels:       maps.Clone(template.Labels),
			Annotations:  maps.Clone(template.Annotations),
			Finalizers:   slices.Clone(template.Finalizers),
			GenerateName: GenerateName(parentName),
		},
		Spec: *template.Spec.DeepCopy(),
	}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	if ref != nil {
		pod.OwnerReferences = []metav1.OwnerReference{*ref}
	}
	return pod
}

// GenerateName is parentName and a dash, shortened so the apiserver's
// random suffix still fits a valid name.
func GenerateName(parentName string) string {
	prefix := parentName + "-"
	if max := validation.DNS1123SubdomainMaxLength - 5; len(prefix) > max {
		prefix = prefix[:max]
	}
	return prefix
}

// SlowStartBatch calls fn count times in batches that start at initial
// and double while every call succeeds, so that a failing create (quota,
// admission) fails once instead of count times. It returns the number of
// successful calls and the first error.
func SlowStartBatch(count, initial int, fn func(i int) error) (int, error) {
	remaining, done := count, 0
	for batch := min(remaining, initial); batch > 0; batch = min(2*batch, remaining) {
		errs := make(chan error, batch)
		var wg sync.WaitGroup
		for i := range batch {
			idx := done + i
			wg.Go(func() {
				if err := fn(idx); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		ok := batch - len(errs)
		done += ok
		if len(errs) > 0 {
			return done, <-errs
		}
		remaining -= batch
	}
	return done, nil
}

// RankForDeletion sorts pods so those to delete first come first, as
// upstream's scale-down does: unscheduled before scheduled, pending before
// unknown before running, not ready before ready, lower deletion cost
// first, pods doubled up on a node (by related, which counts the owner's
// active pods per node) first, more recently ready first, more restarts
// first, newer first — the times compared on a logarithmic scale so pods
// of about the same age count as equal.
func RankForDeletion(list []*corev1.Pod, related []*corev1.Pod, now time.Time) {
	perNode := map[string]int{}
	for _, p := range related {
		if p.Spec.NodeName != "" && Active(p) {
			perNode[p.Spec.NodeName]++
		}
	}
	rank := func(p *corev1.Pod) int {
		if p.Spec.NodeName == "" {
			return 0
		}
		return perNode[p.Spec.NodeName]
	}
	slices.SortStableFunc(list, func(a, b *corev1.Pod) int {
		if c := boolFirst(a.Spec.NodeName == "", b.Spec.NodeName == ""); c != 0 {
			return c
		}
		if c := phaseOrder(a.Status.Phase) - phaseOrder(b.Status.Phase); c != 0 {
			return c
		}
		ra, rb := Ready(a), Ready(b)
		if c := boolFirst(!ra, !rb); c != 0 {
			return c
		}
		if c := deletionCost(a) - deletionCost(b); c != 0 {
			return sign(c)
		}
		if c := rank(b) - rank(a); c != 0 {
			return c
		}
		if ra && rb {
			ta, tb := readySince(a), readySince(b)
			if c := logAge(now, ta) - logAge(now, tb); c != 0 {
				return c
			}
		}
		if c := restarts(b) - restarts(a); c != 0 {
			return int(sign(int64(c)))
		}
		return logAge(now, a.CreationTimestamp.Time) - logAge(now, b.CreationTimestamp.Time)
	})
}

func boolFirst(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	default:
		return 1
	}
}

func sign(v int64) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}

func phaseOrder(p corev1.PodPhase) int {
	switch p {
	case corev1.PodPending:
		return 0
	case corev1.PodUnknown:
		return 1
	case corev1.PodRunning:
		return 2
	}
	return 3
}

func deletionCost(p *corev1.Pod) int64 {
	v, err := strconv.ParseInt(p.Annotations[DeletionCostAnnotation], 10, 32)
	if err != nil {
		return 0
	}
	return v
}

func readySince(p *corev1.Pod) time.Time {
	if c := Condition(p, corev1.PodReady); c != nil {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

// logAge buckets how long ago t was by powers of two seconds; a zero time
// sorts as the newest.
func logAge(now, t time.Time) int {
	if t.IsZero() {
		return -1
	}
	d := now.Sub(t).Seconds()
	if d < 1 {
		return 0
	}
	return int(math.Log2(d)) + 1
}

func restarts(p *corev1.Pod) int32 {
	var n int32
	for _, c := range p.Status.ContainerStatuses {
		n = max(n, c.RestartCount)
	}
	return n
}

// Key is a pod's namespace/name.
func Key(p *corev1.Pod) string { return fmt.Sprintf("%s/%s", p.Namespace, p.Name) }
