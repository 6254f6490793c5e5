package podstatus

import (
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// OwnedByKubelet reports whether the kubelet sets pod conditions of type
// t; Compute keeps the others as the pod has them.
func OwnedByKubelet(t corev1.PodConditionType) bool {
	return kubeletConditions[t]
}

// Probes reports the verdicts of containers' probes, by container ID.
type Probes interface {
	// Ready reports the verdict of a container's readiness probe; false
	// until it first succeeds. Asked only of containers with one.
	Ready(containerID string) bool
	// Started reports the verdict of a container's startup probe; false
	// until it succeeds. Asked only of containers with one.
	Started(containerID string) bool
}

// Computer computes the statuses of the node's pods.
type Computer struct {
	// HostIPs are the node's addresses, first primary.
	HostIPs []string
	// RuntimeName prefixes container IDs ("containerd").
	RuntimeName string
	// Probes gives the verdicts of the containers' probes.
	Probes Probes
}

// Waiting is why a container waits to run: its last start's failure.
type Waiting struct {
	Reason, Message string
}

// Input is what a pod's status is computed from: the pod, what its worker
// knows of it, and what the runtime holds for it.
type Input struct {
	Pod *corev1.Pod
	// Last is the status last computed for the pod; nil before the first,
	// when the pod's own status stands for it.
	Last *corev1.PodStatus
	// Finished is set once the pod's containers are stopped for good.
	Finished bool
	// Waiting holds, by container name, why its last start failed.
	Waiting map[string]Waiting
	// SandboxReady says whether the pod's newest sandbox is ready;
	// SandboxStatus is that sandbox's status, nil without one.
	SandboxReady  bool
	SandboxStatus *runtimeapi.PodSandboxStatus
	// Containers are the pod's containers in the runtime, newest first.
	Containers []*runtimeapi.ContainerStatus
}

// computation is one Compute call, read by each of its steps in place of
// a long parameter list.
type computation struct {
	c   *Computer
	in  *Input
	pod *corev1.Pod
	// st is the status being computed, old the one last computed.
	st  *corev1.PodStatus
	old corev1.PodStatus
	now metav1.Time
	// sandboxReady is whether the sandbox counts as ready: not once the
	// pod has finished.
	sandboxReady bool
}

// Compute derives the pod's status from what the runtime reports: IPs,
// container statuses, phase and conditions, with times rounded to the
// second.
func (c *Computer) Compute(in *Input) *corev1.PodStatus {
	pod := in.Pod
	old := pod.Status
	if in.Last != nil {
		old = *in.Last
	}
	now := metav1.Now()
	st := &corev1.PodStatus{QOSClass: podconfig.QOSClass(pod), StartTime: old.StartTime}
	if st.StartTime == nil {
		st.StartTime = &now
	}
	p := &computation{c: c, in: in, pod: pod, st: st, old: old, now: now, sandboxReady: in.SandboxReady}
	p.setIPs(pod.DeletionTimestamp != nil || in.Finished)
	initDone := p.setInitStatuses()
	counts := p.setContainerStatuses(initDone)
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
		p.sandboxReady = false
	}
	p.setConditions(initDone, counts.allReady)
	normalizeStatus(st)
	return st
}

// setIPs sets the node's and the pod's addresses: the sandbox's (the
// node's for host-network pods) while it is ready, and the last ones
// reported once the pod is ending (going or finished), so they stay for
// its end.
func (p *computation) setIPs(ending bool) {
	st := p.st
	for _, ip := range p.c.HostIPs {
		st.HostIPs = append(st.HostIPs, corev1.HostIP{IP: ip})
	}
	if len(st.HostIPs) > 0 {
		st.HostIP = st.HostIPs[0].IP
	}
	switch {
	case p.sandboxReady:
		ips := SandboxIPs(p.in.SandboxStatus)
		if p.pod.Spec.HostNetwork {
			ips = p.c.HostIPs
		}
		for _, ip := range ips {
			st.PodIPs = append(st.PodIPs, corev1.PodIP{IP: ip})
		}
		if len(ips) > 0 {
			st.PodIP = ips[0]
		}
	case ending:
		st.PodIP, st.PodIPs = p.old.PodIP, p.old.PodIPs
	}
}

// SandboxIPs are the addresses of a sandbox, primary first; nil without a
// sandbox or before it has one.
func SandboxIPs(st *runtimeapi.PodSandboxStatus) []string {
	if st == nil || st.Network == nil || st.Network.Ip == "" {
		return nil
	}
	ips := []string{st.Network.Ip}
	for _, a := range st.Network.AdditionalIps {
		ips = append(ips, a.Ip)
	}
	return ips
}

// setInitStatuses sets the init containers' statuses and reports whether
// initialization is done: every regular init container exited 0 and every
// sidecar started.
func (p *computation) setInitStatuses() bool {
	initDone := true
	for i := range p.pod.Spec.InitContainers {
		c := &p.pod.Spec.InitContainers[i]
		cs := p.containerStatus(c)
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
		p.st.InitContainerStatuses = append(p.st.InitContainerStatuses, cs)
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
func (p *computation) setContainerStatuses(initDone bool) containerCounts {
	n := containerCounts{allReady: true}
	for i := range p.pod.Spec.Containers {
		c := &p.pod.Spec.Containers[i]
		cs := p.containerStatus(c)
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
		p.st.ContainerStatuses = append(p.st.ContainerStatuses, cs)
	}
	return n
}

// setConditions sets the kubelet's pod conditions, keeping each one's
// transition time while its status holds, and keeps the conditions others
// own (readiness gates, the scheduler's).
func (p *computation) setConditions(initDone, allReady bool) {
	st, pod := p.st, p.pod
	cond := func(t corev1.PodConditionType, ok bool, reason string) {
		s := corev1.ConditionFalse
		if ok {
			s = corev1.ConditionTrue
			reason = ""
		}
		c := corev1.PodCondition{Type: t, Status: s, Reason: reason, LastTransitionTime: p.now}
		for _, o := range p.old.Conditions {
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
	cond(corev1.PodReadyToStartContainers, p.sandboxReady, "")
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

func (c *Computer) containerID(id string) string {
	return c.RuntimeName + "://" + id
}

// Started says whether a running container has started: it has no
// startup probe, or the probe succeeded.
func (c *Computer) Started(ctr *corev1.Container, id string) bool {
	return ctr.StartupProbe == nil || c.Probes.Started(id)
}

// ready says whether a running container is ready: started, and without
// a readiness probe or with one that succeeded.
func (c *Computer) ready(ctr *corev1.Container, id string) bool {
	return c.Started(ctr, id) && (ctr.ReadinessProbe == nil || c.Probes.Ready(id))
}

// Latest returns the newest and the previous instance of the named
// container among containers (newest first).
func Latest(containers []*runtimeapi.ContainerStatus, name string) (cur, prev *runtimeapi.ContainerStatus) {
	for _, c := range containers {
		if c.Labels[podconfig.LabelContainerName] != name {
			continue
		}
		if cur == nil {
			cur = c
		} else {
			return cur, c
		}
	}
	return cur, nil
}

func (p *computation) containerStatus(c *corev1.Container) corev1.ContainerStatus {
	pod := p.pod
	cur, prev := Latest(p.in.Containers, c.Name)
	cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: false, Started: new(bool)}
	if cur == nil {
		reason := "ContainerCreating"
		var msg string
		if r, ok := p.in.Waiting[c.Name]; ok {
			reason, msg = r.Reason, r.Message
		}
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: reason, Message: msg}
		return cs
	}
	cs.RestartCount = podconfig.RestartCount(cur.Annotations)
	cs.ImageID = cur.ImageRef
	if cur.Image != nil && cur.Image.UserSpecifiedImage != "" {
		cs.Image = cur.Image.UserSpecifiedImage
	}
	cs.ContainerID = p.c.containerID(cur.Id)
	switch cur.State {
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(0, cur.StartedAt))}
		started := p.c.Started(c, cur.Id)
		cs.Started = &started
		cs.Ready = p.c.ready(c, cur.Id) && p.sandboxReady
	case runtimeapi.ContainerState_CONTAINER_EXITED, runtimeapi.ContainerState_CONTAINER_UNKNOWN:
		term := terminated(cur, p.c.containerID(cur.Id))
		if r, ok := p.in.Waiting[c.Name]; ok && pod.DeletionTimestamp == nil && willRestart(pod, c, cur) {
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: r.Reason, Message: r.Message}
			cs.LastTerminationState.Terminated = term
		} else {
			cs.State.Terminated = term
		}
	case runtimeapi.ContainerState_CONTAINER_CREATED:
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	if cs.LastTerminationState.Terminated == nil && prev != nil && prev.State == runtimeapi.ContainerState_CONTAINER_EXITED {
		cs.LastTerminationState.Terminated = terminated(prev, p.c.containerID(prev.Id))
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
