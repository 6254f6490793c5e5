package kubelet

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"trireme.dev/api/hostports"
	"trireme.dev/kubelet/internal/podconfig"
)

// rejection is why the kubelet refused to run a pod.
type rejection struct {
	reason, message string
}

// Upstream's kubelet admits pods with the scheduler's NodePorts predicate
// and words the refusal so; a pod bound to a node directly (nodeName set,
// as a StatefulSet's template may) never went through the scheduler.
const (
	reasonNodePorts  = "NodePorts"
	messageNodePorts = "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports"
)

// admitOrReject admits a pod new to the kubelet, or records why it is
// refused (logged, and an Event on the pod) and returns that. Called with
// k.mu held.
func (k *Kubelet) admitOrReject(pod *corev1.Pod) *rejection {
	r := k.admit(pod)
	if r != nil {
		k.log.Info("Pod rejected", "pod", types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}, "podUID", pod.UID, "reason", r.reason, "message", r.message)
		k.event(pod, corev1.EventTypeWarning, r.reason, r.message)
	}
	return r
}

// admit decides, as upstream's kubelet does before running a pod new to
// it, whether the node can hold the pod: it is refused when it asks for a
// host port another active pod on the node holds. Called with k.mu held.
func (k *Kubelet) admit(pod *corev1.Pod) *rejection {
	// A pod that is going, finished, or already started (the kubelet
	// restarted) is not admitted again: the pods it competes with are
	// handed over in no particular order, and a running pod must not be
	// refused for a newer one that came first.
	if pod.DeletionTimestamp != nil || terminalPhase(pod.Status.Phase) || pod.Status.StartTime != nil {
		return nil
	}
	wanted := hostports.Of(pod)
	if len(wanted) == 0 {
		return nil
	}
	var used []corev1.ContainerPort
	for uid, w := range k.workers {
		if uid == pod.UID {
			continue
		}
		if other := w.active(); other != nil {
			used = append(used, hostports.Of(other)...)
		}
	}
	for _, p := range wanted {
		if hostports.Taken(p, used) {
			return &rejection{reason: reasonNodePorts, message: messageNodePorts}
		}
	}
	return nil
}

func terminalPhase(p corev1.PodPhase) bool {
	return p == corev1.PodSucceeded || p == corev1.PodFailed
}

// active returns the worker's pod while it holds the node's resources:
// admitted, neither removed nor finished.
func (w *podWorker) active() *corev1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pod == nil || w.removed || w.finished || w.rejected != nil || terminalPhase(w.pod.Status.Phase) {
		return nil
	}
	return w.pod
}

// rejectedStatus is the status of a pod the kubelet refused: failed, with
// the refusal's reason, as upstream's kubelet writes it, keeping the
// conditions others own (PodScheduled).
func rejectedStatus(pod *corev1.Pod, last *corev1.PodStatus, r *rejection) *corev1.PodStatus {
	st := &corev1.PodStatus{
		Phase:              corev1.PodFailed,
		Reason:             r.reason,
		Message:            "Pod was rejected: " + r.message,
		QOSClass:           podconfig.QOSClass(pod),
		ObservedGeneration: pod.Generation,
		Conditions:         foreignConditions(pod.Status.Conditions),
	}
	switch {
	case last != nil && last.StartTime != nil:
		st.StartTime = last.StartTime
	case pod.Status.StartTime != nil:
		st.StartTime = pod.Status.StartTime
	default:
		now := metav1.Now().Rfc3339Copy()
		st.StartTime = &now
	}
	return st
}
