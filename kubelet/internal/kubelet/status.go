package kubelet

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"trireme.dev/kubelet/internal/podconfig"
)

// kubeletConditions are the pod conditions the kubelet owns; others (the
// scheduler's, disruption targets) are kept as they are.
var kubeletConditions = map[corev1.PodConditionType]bool{
	corev1.PodReadyToStartContainers: true,
	corev1.PodInitialized:            true,
	corev1.ContainersReady:           true,
	corev1.PodReady:                  true,
}

// computeStatus derives the pod's status from what the runtime reports.
func (k *Kubelet) computeStatus(pod *corev1.Pod, w *podWorker, rt *podRuntime) *corev1.PodStatus {
	old := pod.Status
	w.mu.Lock()
	if w.status != nil {
		old = *w.status
	}
	w.mu.Unlock()
	now := metav1.Now()
	st := &corev1.PodStatus{QOSClass: podconfig.QOSClass(pod), StartTime: old.StartTime}
	if st.StartTime == nil {
		st.StartTime = &now
	}
	sandboxReady := rt.readySandbox() != nil
	k.setIPs(st, pod, sandboxReady, pod.DeletionTimestamp != nil || w.finished, rt, &old)
	initDone := k.setInitStatuses(st, pod, w, rt, sandboxReady)
	counts := k.setContainerStatuses(st, pod, w, rt, sandboxReady, initDone)
	st.Phase = podPhase(pod, initDone, counts, st.InitContainerStatuses)
	if pod.DeletionTimestamp != nil && counts.running == 0 && st.Phase == corev1.PodRunning {
		if pod.Spec.RestartPolicy == corev1.RestartPolicyAlways || counts.failed == 0 {
			st.Phase = corev1.PodSucceeded
		} else {
			st.Phase = corev1.PodFailed
		}
		if counts.failed > 0 {
			st.Phase = corev1.PodFailed
		}
	}
	if st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed {
		sandboxReady = false
	}
	setConditions(st, pod, &old, now, sandboxReady, initDone, counts.allReady)
	normalizeStatus(st)
	return st
}

// setIPs sets the node's and the pod's addresses: the sandbox's (the
// node's for host-network pods) while it is ready, and the last ones
// reported once the pod is going or finished, so they stay for its end.
func (k *Kubelet) setIPs(st *corev1.PodStatus, pod *corev1.Pod, sandboxReady, ending bool, rt *podRuntime, old *corev1.PodStatus) {
	for _, ip := range k.cfg.NodeIPs {
		st.HostIPs = append(st.HostIPs, corev1.HostIP{IP: ip.String()})
	}
	if len(st.HostIPs) > 0 {
		st.HostIP = st.HostIPs[0].IP
	}
	switch {
	case sandboxReady:
		ips := sandboxIPs(rt.sandboxStatus)
		if pod.Spec.HostNetwork {
			ips = k.podConfig.HostIPs
		}
		for _, ip := range ips {
			st.PodIPs = append(st.PodIPs, corev1.PodIP{IP: ip})
		}
		if len(ips) > 0 {
			st.PodIP = ips[0]
		}
	case ending:
		st.PodIP, st.PodIPs = old.PodIP, old.PodIPs
	}
}

// setInitStatuses sets the init containers' statuses and reports whether
// initialization is done: every regular init container exited 0 and every
// sidecar started.
func (k *Kubelet) setInitStatuses(st *corev1.PodStatus, pod *corev1.Pod, w *podWorker, rt *podRuntime, sandboxReady bool) bool {
	initDone := true
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cs := k.containerStatus(pod, w, rt, c, sandboxReady)
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		if sidecar {
			if cs.Started == nil || !*cs.Started {
				initDone = false
			}
		} else if cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 {
			initDone = false
			if cs.State.Waiting != nil && cs.State.Waiting.Reason == "ContainerCreating" {
				cs.State.Waiting.Reason = "PodInitializing"
			}
		}
		st.InitContainerStatuses = append(st.InitContainerStatuses, cs)
	}
	return initDone
}

// containerCounts counts a pod's regular containers by state, for its
// phase.
type containerCounts struct {
	running, waiting, stopped, succeeded, failed int
	allReady                                     bool
}

// setContainerStatuses sets the regular containers' statuses and counts
// them.
func (k *Kubelet) setContainerStatuses(st *corev1.PodStatus, pod *corev1.Pod, w *podWorker, rt *podRuntime, sandboxReady, initDone bool) containerCounts {
	n := containerCounts{allReady: true}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cs := k.containerStatus(pod, w, rt, c, sandboxReady)
		if !initDone && cs.State.Waiting != nil && cs.State.Waiting.Reason == "ContainerCreating" {
			cs.State.Waiting.Reason = "PodInitializing"
		}
		exited := cs.State.Terminated
		if exited == nil && cs.State.Waiting != nil {
			exited = cs.LastTerminationState.Terminated
		}
		switch {
		case cs.State.Running != nil:
			n.running++
		case exited != nil:
			n.stopped++
			if exited.ExitCode == 0 {
				n.succeeded++
			} else {
				n.failed++
			}
		default:
			n.waiting++
		}
		if !cs.Ready {
			n.allReady = false
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	return n
}

// setConditions sets the kubelet's pod conditions, keeping each one's
// transition time while its status holds, and keeps the conditions others
// own (readiness gates, the scheduler's).
func setConditions(st *corev1.PodStatus, pod *corev1.Pod, old *corev1.PodStatus, now metav1.Time, sandboxReady, initDone, allReady bool) {
	cond := func(t corev1.PodConditionType, ok bool, reason string) {
		s := corev1.ConditionFalse
		if ok {
			s = corev1.ConditionTrue
			reason = ""
		}
		c := corev1.PodCondition{Type: t, Status: s, Reason: reason, LastTransitionTime: now}
		for _, o := range old.Conditions {
			if o.Type == t && o.Status == s {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
		if st.Phase == corev1.PodSucceeded && t != corev1.PodReadyToStartContainers && t != corev1.PodInitialized {
			c.Reason = "PodCompleted"
		}
		st.Conditions = append(st.Conditions, c)
	}
	gatesOK := true
	for _, g := range pod.Spec.ReadinessGates {
		found := false
		for _, c := range pod.Status.Conditions {
			if c.Type == g.ConditionType && c.Status == corev1.ConditionTrue {
				found = true
			}
		}
		gatesOK = gatesOK && found
	}
	cond(corev1.PodReadyToStartContainers, sandboxReady, "")
	cond(corev1.PodInitialized, initDone, "ContainersNotInitialized")
	cond(corev1.ContainersReady, allReady && initDone, "ContainersNotReady")
	readyReason := "ContainersNotReady"
	if allReady && initDone && !gatesOK {
		readyReason = "ReadinessGatesNotReady"
	}
	cond(corev1.PodReady, allReady && initDone && gatesOK, readyReason)
	for _, c := range pod.Status.Conditions {
		if !kubeletConditions[c.Type] {
			st.Conditions = append(st.Conditions, c)
		}
	}
	if !hasCondition(st.Conditions, corev1.PodScheduled) {
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: *st.StartTime})
	}
}

// normalizeStatus rounds the status's times down to the second, the
// precision the API stores them with, as upstream's status manager does:
// a status compared with the one last written, or with what the
// apiserver echoes back, then differs only where something changed, not
// in nanoseconds the apiserver dropped.
func normalizeStatus(st *corev1.PodStatus) {
	second := func(t *metav1.Time) {
		if t != nil {
			*t = t.Rfc3339Copy()
		}
	}
	second(st.StartTime)
	for i := range st.Conditions {
		second(&st.Conditions[i].LastProbeTime)
		second(&st.Conditions[i].LastTransitionTime)
	}
	for _, list := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses, st.EphemeralContainerStatuses} {
		for i := range list {
			for _, state := range []*corev1.ContainerState{&list[i].State, &list[i].LastTerminationState} {
				if state.Running != nil {
					second(&state.Running.StartedAt)
				}
				if state.Terminated != nil {
					second(&state.Terminated.StartedAt)
					second(&state.Terminated.FinishedAt)
				}
			}
		}
	}
}

func hasCondition(cs []corev1.PodCondition, t corev1.PodConditionType) bool {
	for _, c := range cs {
		if c.Type == t {
			return true
		}
	}
	return false
}

func podPhase(pod *corev1.Pod, initDone bool, n containerCounts, inits []corev1.ContainerStatus) corev1.PodPhase {
	if !initDone {
		if pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
			for _, cs := range inits {
				if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
					return corev1.PodFailed
				}
			}
		}
		return corev1.PodPending
	}
	switch {
	case n.waiting > 0:
		return corev1.PodPending
	case n.running > 0:
		return corev1.PodRunning
	case n.stopped > 0:
		switch pod.Spec.RestartPolicy {
		case corev1.RestartPolicyAlways:
			return corev1.PodRunning
		case corev1.RestartPolicyOnFailure:
			if n.failed > 0 {
				return corev1.PodRunning
			}
			return corev1.PodSucceeded
		default:
			if n.failed > 0 {
				return corev1.PodFailed
			}
			return corev1.PodSucceeded
		}
	}
	return corev1.PodPending
}

func sandboxIPs(st *runtimeapi.PodSandboxStatus) []string {
	if st == nil || st.Network == nil || st.Network.Ip == "" {
		return nil
	}
	ips := []string{st.Network.Ip}
	for _, a := range st.Network.AdditionalIps {
		ips = append(ips, a.Ip)
	}
	return ips
}

func (k *Kubelet) containerID(id string) string {
	return k.cfg.RuntimeName + "://" + id
}

func (k *Kubelet) containerStatus(pod *corev1.Pod, w *podWorker, rt *podRuntime, c *corev1.Container, sandboxReady bool) corev1.ContainerStatus {
	cur, prev := rt.latest(c.Name)
	cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: false, Started: new(bool)}
	if cur == nil {
		reason := "ContainerCreating"
		var msg string
		if r, ok := w.getStartErr(c.Name); ok {
			reason, msg = r.reason, r.message
		}
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: msg}
		return cs
	}
	cs.RestartCount = podconfig.RestartCount(cur.Annotations)
	cs.ImageID = cur.ImageRef
	if cur.Image != nil && cur.Image.UserSpecifiedImage != "" {
		cs.Image = cur.Image.UserSpecifiedImage
	}
	cs.ContainerID = k.containerID(cur.Id)
	switch cur.State {
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(0, cur.StartedAt))}
		started := k.started(c, cur.Id)
		cs.Started = &started
		cs.Ready = k.ready(c, cur.Id) && sandboxReady
	case runtimeapi.ContainerState_CONTAINER_EXITED, runtimeapi.ContainerState_CONTAINER_UNKNOWN:
		term := terminated(cur, k.containerID(cur.Id))
		if r, ok := w.getStartErr(c.Name); ok && pod.DeletionTimestamp == nil && willRestart(pod, c, cur) {
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: r.reason, Message: r.message}
			cs.LastTerminationState.Terminated = term
		} else {
			cs.State.Terminated = term
		}
	case runtimeapi.ContainerState_CONTAINER_CREATED:
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	if cs.LastTerminationState.Terminated == nil && prev != nil && prev.State == runtimeapi.ContainerState_CONTAINER_EXITED {
		cs.LastTerminationState.Terminated = terminated(prev, k.containerID(prev.Id))
	}
	return cs
}

func willRestart(pod *corev1.Pod, c *corev1.Container, cs *runtimeapi.ContainerStatus) bool {
	policy := pod.Spec.RestartPolicy
	if c.RestartPolicy != nil {
		policy = corev1.RestartPolicy(*c.RestartPolicy)
	}
	switch policy {
	case corev1.RestartPolicyAlways:
		return true
	case corev1.RestartPolicyOnFailure:
		return cs.ExitCode != 0
	}
	return false
}

func terminated(cs *runtimeapi.ContainerStatus, id string) *corev1.ContainerStateTerminated {
	t := &corev1.ContainerStateTerminated{
		ExitCode:    cs.ExitCode,
		Reason:      cs.Reason,
		Message:     cs.Message,
		StartedAt:   metav1.NewTime(time.Unix(0, cs.StartedAt)),
		FinishedAt:  metav1.NewTime(time.Unix(0, cs.FinishedAt)),
		ContainerID: id,
	}
	if t.Reason == "" {
		if t.ExitCode == 0 {
			t.Reason = "Completed"
		} else {
			t.Reason = "Error"
		}
	}
	if t.Message == "" {
		t.Message = terminationMessage(cs)
	}
	return t
}

// terminationMessage reads the file the container wrote at its
// terminationMessagePath (found through the container's mounts).
func terminationMessage(cs *runtimeapi.ContainerStatus) string {
	path := cs.Annotations[podconfig.AnnotationTerminationMessagePath]
	for _, m := range cs.Mounts {
		if m.ContainerPath == path {
			b, err := os.ReadFile(m.HostPath)
			if err == nil && len(b) > 0 {
				if len(b) > 4096 {
					b = b[:4096]
				}
				return string(b)
			}
		}
	}
	return ""
}

// writeStatus patches pods/status when the status differs from the one
// last written.
func (k *Kubelet) writeStatus(ctx context.Context, w *podWorker, pod *corev1.Pod, st *corev1.PodStatus) error {
	w.mu.Lock()
	same := w.status != nil && apiequality.Semantic.DeepEqual(w.status, st)
	w.mu.Unlock()
	if same {
		return nil
	}
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
		if err := k.patchStatus(ctx, pod.Namespace, pod.Name, uid, st); err != nil {
			if !(isStatic(pod) && apierrors.IsNotFound(err)) {
				return err
			}
		}
		logr.FromContextOrDiscard(ctx).V(3).Info("Patched pod status", "phase", st.Phase)
	}
	w.mu.Lock()
	w.status = st.DeepCopy()
	w.mu.Unlock()
	return nil
}

func (k *Kubelet) patchStatus(ctx context.Context, ns, name string, uid types.UID, st *corev1.PodStatus) error {
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
