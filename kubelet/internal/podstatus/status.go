package podstatus

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/logs"
	"k8s.io/utils/ptr"

	"trireme.dev/kubelet/internal/podconfig"
)

// kubeletConditions are the pod conditions the kubelet owns; others (the
// scheduler's, disruption targets) are kept as they are.
var kubeletConditions = map[corev1.PodConditionType]bool{
	corev1.PodReadyToStartContainers: true,
	corev1.PodInitialized:            true,
	corev1.ContainersReady:           true,
	corev1.PodReady:                  true,
	corev1.PodResizePending:          true,
	corev1.PodResizeInProgress:       true,
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
	// PodLogDir is where a pod's container logs are, for log paths the
	// runtime reports relative to it; nil takes them as they are.
	PodLogDir func(*corev1.Pod) string
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
	// Allocated are the resources the kubelet allocated to each init and
	// app container, by name; a container missing has its spec's.
	// Actuated are those each container instance runs with, by ID; a
	// running instance missing runs with its allocation.
	Allocated map[string]corev1.ResourceRequirements
	Actuated  map[string]corev1.ResourceRequirements
	// ResizeConditions are the pod's PodResizePending and
	// PodResizeInProgress conditions, when it has them.
	ResizeConditions []corev1.PodCondition
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
	// The status reports the generation of the spec it was computed
	// from, as upstream's kubelet does (status.observedGeneration).
	st := &corev1.PodStatus{QOSClass: podconfig.QOSClass(pod), StartTime: old.StartTime, ObservedGeneration: pod.Generation}
	if st.StartTime == nil {
		st.StartTime = &now
	}
	p := &computation{c: c, in: in, pod: pod, st: st, old: old, now: now, sandboxReady: in.SandboxReady}
	p.setIPs(pod.DeletionTimestamp != nil || in.Finished)
	// A pod whose app containers have run was initialized, even while a
	// sidecar restarts.
	initDone := p.setInitStatuses() || p.appStarted()
	counts := p.setContainerStatuses(initDone)
	p.setEphemeralStatuses()
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
	p.setConditions(initDone)
	normalizeStatus(st)
	return st
}

// Terminate makes st the final status of a pod the kubelet has stopped for
// good (deleted, or evicted), as upstream's kubelet does before the pod is
// removed: a container that has no terminated state (it never started, or
// the runtime lost it) is reported terminated with reason
// ContainerStatusUnknown and exit code 137, since nobody knows it succeeded;
// app containers only once the pod was initialized (a waiting init container
// says enough). A pod that is not yet Succeeded or Failed becomes Failed, so
// that controllers waiting for a terminal phase (a Job with a
// podFailurePolicy keeps its finalizer on a deleted pod until then) see one.
// Static pods keep their phase, as upstream's do.
func Terminate(st *corev1.PodStatus, static bool) {
	unknown := func(cs []corev1.ContainerStatus) {
		for i := range cs {
			if cs[i].State.Terminated != nil {
				continue
			}
			cs[i].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 137,
				Reason:   "ContainerStatusUnknown",
				Message:  "The container could not be located when the pod was terminated",
			}}
			cs[i].Ready = false
			cs[i].Started = ptr.To(false)
		}
	}
	unknown(st.InitContainerStatuses)
	if podInitialized(st) {
		unknown(st.ContainerStatuses)
	}
	if static || st.Phase == corev1.PodSucceeded || st.Phase == corev1.PodFailed {
		return
	}
	st.Phase = corev1.PodFailed
}

// podInitialized says whether st's pod got past its init containers.
func podInitialized(st *corev1.PodStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == corev1.PodInitialized {
			return c.Status == corev1.ConditionTrue
		}
	}
	return len(st.InitContainerStatuses) == 0
}

// appStarted says whether any app container has run in the runtime.
func (p *computation) appStarted() bool {
	for i := range p.pod.Spec.Containers {
		cur, _ := Latest(p.in.Containers, p.pod.Spec.Containers[i].Name)
		if cur != nil && cur.State != runtimeapi.ContainerState_CONTAINER_CREATED {
			return true
		}
	}
	return false
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
		if !initialized(c, &cs) {
			initDone = false
		}
		if !isSidecar(c) {
			// A regular init container is ready once it has succeeded,
			// as upstream's prober manager reports it.
			cs.Ready = cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0
			if cs.State.Waiting != nil && cs.State.Waiting.Reason == "ContainerCreating" {
				cs.State.Waiting.Reason = "PodInitializing"
			}
		}
		p.st.InitContainerStatuses = append(p.st.InitContainerStatuses, cs)
	}
	return initDone
}

// isSidecar says whether an init container is a sidecar: restarted
// always, and running beside the app containers.
func isSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// initialized says whether an init container is done with the pod's
// initialization: a sidecar once started, any other once it succeeded.
func initialized(c *corev1.Container, cs *corev1.ContainerStatus) bool {
	if isSidecar(c) {
		return cs.Started != nil && *cs.Started
	}
	return cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0
}

// containerCounts counts a pod's regular containers by state, for its
// phase.
type containerCounts struct {
	running, waiting, stopped, succeeded, failed int
}

// setContainerStatuses sets the regular containers' statuses and counts
// them.
func (p *computation) setContainerStatuses(initDone bool) containerCounts {
	var n containerCounts
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
		p.st.ContainerStatuses = append(p.st.ContainerStatuses, cs)
	}
	return n
}

// setEphemeralStatuses sets the ephemeral containers' statuses: each
// runs once, and counts for neither the phase nor readiness.
func (p *computation) setEphemeralStatuses() {
	for i := range p.pod.Spec.EphemeralContainers {
		c := podconfig.EphemeralContainer(&p.pod.Spec.EphemeralContainers[i])
		p.st.EphemeralContainerStatuses = append(p.st.EphemeralContainerStatuses, p.containerStatus(c))
	}
}

// setConditions sets the kubelet's pod conditions, with upstream's
// reasons and messages and the generation they were computed for,
// keeping each one's transition time while its status holds, and keeps
// the conditions others own (readiness gates, the scheduler's).
func (p *computation) setConditions(initDone bool) {
	st, pod := p.st, p.pod
	add := func(c corev1.PodCondition) {
		c.ObservedGeneration = pod.Generation
		c.LastTransitionTime = p.now
		for _, o := range p.old.Conditions {
			if o.Type == c.Type && o.Status == c.Status {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
		st.Conditions = append(st.Conditions, c)
	}
	add(boolCondition(corev1.PodReadyToStartContainers, p.sandboxReady))
	add(p.initializedCondition(initDone))
	containersReady := p.containersReadyCondition()
	add(containersReady)
	add(p.readyCondition(containersReady))
	for _, c := range p.in.ResizeConditions {
		// A resize condition reports the generation of its resize.
		gen := c.ObservedGeneration
		add(c)
		st.Conditions[len(st.Conditions)-1].ObservedGeneration = gen
	}
	for _, c := range pod.Status.Conditions {
		if !kubeletConditions[c.Type] {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
				// Upstream's kubelet reports a running pod scheduled at
				// the generation it acts on, as its own conditions.
				c.ObservedGeneration = pod.Generation
			}
			st.Conditions = append(st.Conditions, c)
		}
	}
	if !hasCondition(st.Conditions, corev1.PodScheduled) {
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: *st.StartTime, ObservedGeneration: pod.Generation})
	}
}

func boolCondition(t corev1.PodConditionType, ok bool) corev1.PodCondition {
	if ok {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue}
	}
	return corev1.PodCondition{Type: t, Status: corev1.ConditionFalse}
}

// Upstream's reasons for the kubelet's pod conditions.
const (
	reasonPodCompleted             = "PodCompleted"
	reasonPodFailed                = "PodFailed"
	reasonContainersNotReady       = "ContainersNotReady"
	reasonContainersNotInitialized = "ContainersNotInitialized"
	reasonReadinessGatesNotReady   = "ReadinessGatesNotReady"
)

// initializedCondition is Initialized: true once every init container is
// done (initDone), and otherwise false naming those that are not.
func (p *computation) initializedCondition(initDone bool) corev1.PodCondition {
	c := boolCondition(corev1.PodInitialized, initDone)
	if p.st.Phase == corev1.PodSucceeded {
		return corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, Reason: reasonPodCompleted}
	}
	if initDone {
		return c
	}
	var incomplete []string
	for i := range p.pod.Spec.InitContainers {
		if !initialized(&p.pod.Spec.InitContainers[i], &p.st.InitContainerStatuses[i]) {
			incomplete = append(incomplete, p.pod.Spec.InitContainers[i].Name)
		}
	}
	c.Reason = reasonContainersNotInitialized
	c.Message = fmt.Sprintf("containers with incomplete status: %s", nameList(incomplete))
	return c
}

// containersReadyCondition is ContainersReady: true when every app
// container and sidecar is ready; false naming those that are not, or
// with the terminal phase's reason once the pod has finished.
func (p *computation) containersReadyCondition() corev1.PodCondition {
	c := boolCondition(corev1.ContainersReady, false)
	switch p.st.Phase {
	case corev1.PodSucceeded:
		c.Reason = reasonPodCompleted
		return c
	case corev1.PodFailed:
		c.Reason = reasonPodFailed
		return c
	}
	var unready []string
	for i := range p.pod.Spec.InitContainers {
		if isSidecar(&p.pod.Spec.InitContainers[i]) && !p.st.InitContainerStatuses[i].Ready {
			unready = append(unready, p.pod.Spec.InitContainers[i].Name)
		}
	}
	for i := range p.pod.Spec.Containers {
		if !p.st.ContainerStatuses[i].Ready {
			unready = append(unready, p.pod.Spec.Containers[i].Name)
		}
	}
	if len(unready) == 0 {
		return boolCondition(corev1.ContainersReady, true)
	}
	c.Reason = reasonContainersNotReady
	c.Message = fmt.Sprintf("containers with unready status: %s", nameList(unready))
	return c
}

// readyCondition is Ready: ContainersReady's verdict, and then the
// readiness gates'.
func (p *computation) readyCondition(containersReady corev1.PodCondition) corev1.PodCondition {
	if containersReady.Status != corev1.ConditionTrue {
		return corev1.PodCondition{Type: corev1.PodReady, Status: containersReady.Status, Reason: containersReady.Reason, Message: containersReady.Message}
	}
	var unready []string
	for _, g := range p.pod.Spec.ReadinessGates {
		var found *corev1.PodCondition
		for i := range p.pod.Status.Conditions {
			if p.pod.Status.Conditions[i].Type == g.ConditionType {
				found = &p.pod.Status.Conditions[i]
			}
		}
		switch {
		case found == nil:
			unready = append(unready, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", g.ConditionType))
		case found.Status != corev1.ConditionTrue:
			unready = append(unready, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", g.ConditionType, found.Status))
		}
	}
	if len(unready) > 0 {
		return corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: reasonReadinessGatesNotReady, Message: strings.Join(unready, ", ")}
	}
	return boolCondition(corev1.PodReady, true)
}

// nameList formats names as upstream's messages do: [a b c].
func nameList(names []string) string {
	return "[" + strings.Join(names, " ") + "]"
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
	p.setResources(&cs, c, cur)
	switch cur.State {
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(0, cur.StartedAt))}
		started := p.c.Started(c, cur.Id)
		cs.Started = &started
		cs.Ready = p.c.ready(c, cur.Id) && p.sandboxReady
	case runtimeapi.ContainerState_CONTAINER_EXITED, runtimeapi.ContainerState_CONTAINER_UNKNOWN:
		term := p.terminated(cur)
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
		cs.LastTerminationState.Terminated = p.terminated(prev)
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

// terminated is the state of an exited container instance: the runtime's
// exit code, reason and message, and the termination message the
// container left, after the runtime's message as upstream joins them.
func (p *computation) terminated(cs *runtimeapi.ContainerStatus) *corev1.ContainerStateTerminated {
	t := &corev1.ContainerStateTerminated{
		ExitCode:    cs.ExitCode,
		Reason:      cs.Reason,
		Message:     cs.Message,
		StartedAt:   metav1.NewTime(time.Unix(0, cs.StartedAt)),
		FinishedAt:  metav1.NewTime(time.Unix(0, cs.FinishedAt)),
		ContainerID: p.c.containerID(cs.Id),
	}
	if t.Reason == "" {
		if t.ExitCode == 0 {
			t.Reason = "Completed"
		} else {
			t.Reason = "Error"
		}
	}
	if msg := p.terminationMessage(cs); msg != "" {
		if t.Message != "" {
			t.Message += ": "
		}
		t.Message += msg
	}
	return t
}

// Upstream's bounds on a termination message: the end of the file, or of
// the log when the container failed under FallbackToLogsOnError.
const (
	maxTerminationMessageBytes    = 4096
	maxTerminationMessageLogBytes = 2048
	maxTerminationMessageLogLines = 80
)

// terminationMessage is what the container wrote at its
// terminationMessagePath (found through its mounts); under
// FallbackToLogsOnError, a container that failed and wrote nothing there
// gets the end of its log instead (one that could not even run has none).
func (p *computation) terminationMessage(cs *runtimeapi.ContainerStatus) string {
	msg := ""
	path := cs.Annotations[podconfig.AnnotationTerminationMessagePath]
	for _, m := range cs.Mounts {
		if path != "" && m.ContainerPath == path {
			msg = readTail(m.HostPath, maxTerminationMessageBytes)
			break
		}
	}
	fallback := corev1.TerminationMessagePolicy(cs.Annotations[podconfig.AnnotationTerminationMessagePolicy]) == corev1.TerminationMessageFallbackToLogsOnError &&
		cs.ExitCode != 0 && cs.Reason != "ContainerCannotRun"
	if msg != "" || !fallback {
		return msg
	}
	logPath := cs.LogPath
	if logPath != "" && !filepath.IsAbs(logPath) && p.c.PodLogDir != nil {
		logPath = filepath.Join(p.c.PodLogDir(p.pod), logPath)
	}
	return logTail(logPath)
}

// readTail returns up to max bytes from the end of the file at path;
// nothing when it cannot be read.
func readTail(path string, max int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return ""
	}
	if fi.Size() > max {
		if _, err := f.Seek(-max, io.SeekEnd); err != nil {
			return ""
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, max))
	if err != nil {
		return ""
	}
	return string(b)
}

// logTail returns the last lines of a container's CRI log, at most
// maxTerminationMessageLogBytes of them (the latest).
func logTail(path string) string {
	if path == "" {
		return ""
	}
	var buf tailBuffer
	lines := int64(maxTerminationMessageLogLines)
	if err := logs.ReadLogs(context.Background(), path, "", &logs.LogOptions{TailLines: &lines}, nil, &buf, &buf); err != nil {
		return fmt.Sprintf("Error on reading termination message from logs: %v", err)
	}
	return string(buf.b)
}

// tailBuffer keeps the last maxTerminationMessageLogBytes written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - maxTerminationMessageLogBytes; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

// setResources sets a container's allocatedResources (its allocated
// requests) and resources: those the running instance was given, the
// allocated ones otherwise, as upstream reports them for containers the
// runtime has.
func (p *computation) setResources(cs *corev1.ContainerStatus, c *corev1.Container, cur *runtimeapi.ContainerStatus) {
	allocated, ok := p.in.Allocated[c.Name]
	if !ok {
		allocated = c.Resources
	}
	r := allocated
	if a, ok := p.in.Actuated[cur.Id]; ok && cur.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
		r = a
	}
	r = *r.DeepCopy()
	if len(r.Requests) == 0 {
		r.Requests = nil
	}
	if len(r.Limits) == 0 {
		r.Limits = nil
	}
	cs.Resources = &r
	if len(allocated.Requests) > 0 {
		cs.AllocatedResources = allocated.Requests.DeepCopy()
	}
}
