package kubelet

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"trireme.dev/kubelet/internal/podstatus"
)

// computeStatus derives the pod's status from what the runtime reports
// and what its worker knows: the status it last computed, whether the pod
// has finished, and why containers failed to start.
func (k *Kubelet) computeStatus(pod *corev1.Pod, w *podWorker, rt *podRuntime) *corev1.PodStatus {
	w.mu.Lock()
	if w.rejected != nil {
		defer w.mu.Unlock()
		return rejectedStatus(pod, w.status, w.rejected)
	}
	in := &podstatus.Input{
		Pod:           pod,
		Last:          w.status,
		Finished:      w.finished,
		Waiting:       maps.Clone(w.startErr),
		SandboxReady:  rt.readySandbox() != nil,
		SandboxStatus: rt.sandboxStatus,
		Containers:    rt.containers,
		Allocated:     w.resize.allocated,
		Actuated:      maps.Clone(w.resize.actuated),
	}
	in.ResizeConditions = k.resizeConditions(w, pod, rt)
	w.mu.Unlock()
	return k.statuses.Compute(in)
}

// writeStatus patches pods/status when the status differs from the one
// last written.
func (k *Kubelet) writeStatus(ctx context.Context, w *podWorker, pod *corev1.Pod, st *corev1.PodStatus) error {
	w.mu.Lock()
	same := w.status != nil && !w.unwritten && apiequality.Semantic.DeepEqual(w.status, st)
	w.mu.Unlock()
	if same {
		return nil
	}
	unwritten := false
	if k.cfg.Client != nil {
		// Its echo may come back before the patch returns: it is the
		// kubelet's own write all the same (see statusEcho).
		w.mu.Lock()
		w.writing = st
		w.mu.Unlock()
		defer func() {
			w.mu.Lock()
			w.writing = nil
			w.mu.Unlock()
		}()
		uid := pod.UID
		if isStatic(pod) {
			// The status goes to the mirror pod, which has its own UID.
			uid = ""
		}
		switch err := k.patchStatus(ctx, pod.Namespace, pod.Name, uid, st); {
		case isStatic(pod) && apierrors.IsNotFound(err):
			// No mirror pod yet: MirrorSeen brings the status to it.
			unwritten = true
		case err != nil:
			return err
		default:
			logr.FromContextOrDiscard(ctx).V(3).Info("Patched pod status", "phase", st.Phase)
		}
	}
	w.mu.Lock()
	w.status = st.DeepCopy()
	w.unwritten = unwritten
	w.mu.Unlock()
	return nil
}

// serverStatus is told the status the API holds for the worker's pod. One
// that is neither what the worker last wrote nor what it is writing is
// written again on a sync it wakes, as upstream's status manager
// reconciles: a patch the kubelet gave up on (its deadline passed while the
// node was cut off) can still reach the apiserver after a later one, and
// leave an older status there, a Ready=False nothing would correct. It
// reports whether the worker is to write its status again.
func (w *podWorker) serverStatus(st *corev1.PodStatus) bool {
	w.mu.Lock()
	drifted := w.status != nil && !w.unwritten && !sameStatus(st, w.status) && (w.writing == nil || !sameStatus(st, w.writing))
	if drifted {
		w.unwritten = true
	}
	w.mu.Unlock()
	if drifted {
		w.wake()
	}
	return drifted
}

// sameStatus compares what the kubelet reports of a pod, its times aside
// (the API keeps them to the second): the phase, the conditions it owns,
// and each container's state, readiness and restarts.
func sameStatus(a, b *corev1.PodStatus) bool {
	return a.Phase == b.Phase &&
		maps.Equal(ownedConditions(a.Conditions), ownedConditions(b.Conditions)) &&
		maps.Equal(containerSummaries(a), containerSummaries(b))
}

func ownedConditions(conditions []corev1.PodCondition) map[corev1.PodConditionType]corev1.ConditionStatus {
	out := map[corev1.PodConditionType]corev1.ConditionStatus{}
	for _, c := range conditions {
		if podstatus.OwnedByKubelet(c.Type) {
			out[c.Type] = c.Status
		}
	}
	return out
}

// containerSummary is what sameStatus compares of a container's status.
type containerSummary struct {
	state    string
	ready    bool
	restarts int32
}

func containerSummaries(st *corev1.PodStatus) map[string]containerSummary {
	out := map[string]containerSummary{}
	for _, list := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses} {
		for _, c := range list {
			state := "waiting"
			switch {
			case c.State.Running != nil:
				state = "running"
			case c.State.Terminated != nil:
				state = "terminated"
			}
			out[c.Name] = containerSummary{state: state, ready: c.Ready, restarts: c.RestartCount}
		}
	}
	return out
}

// statusWriteTimeout bounds one status patch. The patch is a step of the
// pod's sync: an apiserver that does not answer (its etcd restarting, a
// connection to a virtual IP that moved away, which client-go notices only
// after 45 s) must not hold up the restart of the pod's containers, such as
// that etcd's own.
const statusWriteTimeout = 5 * time.Second

func (k *Kubelet) patchStatus(ctx context.Context, ns, name string, uid types.UID, st *corev1.PodStatus) error {
	ctx, cancel := context.WithTimeout(ctx, statusWriteTimeout)
	defer cancel()
	body := map[string]any{"status": st}
	if uid != "" {
		// A pod deleted and re-created under the same name is not ours.
		body["metadata"] = map[string]any{"uid": uid}
	}
	patch, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("marshal status: %w", err)
	}
	_, err = k.cfg.Client.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("patch status: %w", err)
	}
	return nil
}
