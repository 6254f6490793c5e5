package kubelet

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// evictionGracePeriod is the grace period of a pod evicted under a hard
// threshold (upstream's immediate eviction: one second).
const evictionGracePeriod int64 = 1

// Evict stops the pod with uid for good and reports it Failed with reason
// Evicted and message, as upstream's eviction manager does. It returns
// false when this kubelet runs no such pod.
func (k *Kubelet) Evict(uid types.UID, message string) bool {
	k.mu.Lock()
	w := k.workers[uid]
	k.mu.Unlock()
	if w == nil {
		return false
	}
	w.mu.Lock()
	if w.evicted == "" {
		w.evicted = message
	}
	w.mu.Unlock()
	w.wake()
	return true
}

// syncEvicted kills an evicted pod's containers and writes its terminal
// status; it reports whether the pod was evicted.
func (k *Kubelet) syncEvicted(ctx context.Context, w *podWorker, pod *corev1.Pod, rt *podRuntime) (bool, error) {
	w.mu.Lock()
	message := w.evicted
	w.mu.Unlock()
	if message == "" {
		return false, nil
	}
	k.event(pod, corev1.EventTypeWarning, "Evicted", message)
	if err := k.killPod(ctx, pod, rt, ptr.To(evictionGracePeriod)); err != nil {
		return true, err
	}
	w.mu.Lock()
	w.finished = true
	w.mu.Unlock()
	rt, err := k.observe(ctx, w.uid)
	if err != nil {
		return true, err
	}
	status := k.computeStatus(pod, w, rt)
	status.Phase = corev1.PodFailed
	status.Reason = "Evicted"
	status.Message = message
	now := time.Now()
	cond := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "TerminationByKubelet", Message: message}
	cond.LastTransitionTime.Time = now
	replaced := false
	for i := range status.Conditions {
		if status.Conditions[i].Type == corev1.DisruptionTarget {
			status.Conditions[i], replaced = cond, true
		}
	}
	if !replaced {
		status.Conditions = append(status.Conditions, cond)
	}
	return true, k.writeStatus(ctx, w, pod, status)
}
