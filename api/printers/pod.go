package printers

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nodeLostReason is the pod status reason the node lifecycle controller sets
// on pods of an unreachable node; upstream prints such pods as Unknown.
const nodeLostReason = "NodeLost"

var podColumns = columns(
	nameCol(),
	col("Ready", typeString, "The aggregate readiness state of this pod for accepting traffic."),
	col("Status", typeString, "The aggregate status of the containers in this pod."),
	col("Restarts", typeString, "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
	ageCol(),
	wide("IP", typeString, corev1.PodStatus{}.SwaggerDoc()["podIP"]),
	wide("Node", typeString, corev1.PodSpec{}.SwaggerDoc()["nodeName"]),
	wide("Nominated Node", typeString, corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]),
	wide("Readiness Gates", typeString, corev1.PodSpec{}.SwaggerDoc()["readinessGates"]),
)

func podCells(pod *corev1.Pod, now time.Time) []any {
	s := summarizePod(pod)
	restarts := strconv.Itoa(s.restarts)
	if s.restarts != 0 && !s.lastRestart.IsZero() {
		restarts = fmt.Sprintf("%d (%s ago)", s.restarts, since(s.lastRestart, now))
	}
	return []any{
		pod.Name,
		fmt.Sprintf("%d/%d", s.ready, s.total),
		s.status,
		restarts,
		age(pod, now),
		orNone(primaryPodIP(&pod.Status)),
		orNone(pod.Spec.NodeName),
		orNone(pod.Status.NominatedNodeName),
		readinessGates(pod),
	}
}

// podConditions marks finished pods so clients can hide them.
func podConditions(pod *corev1.Pod) []metav1.TableRowCondition {
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
	case corev1.PodFailed:
		return []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: string(corev1.PodFailed), Message: "The pod failed."}}
	}
	return nil
}

// podSummary is what the READY, STATUS and RESTARTS columns show.
type podSummary struct {
	ready, total int
	status       string
	restarts     int
	lastRestart  metav1.Time
}

// summarizePod works out a pod's displayed status the way kubectl users
// know it: the phase or status reason, overridden by the first init
// container still at work, then by the state of the regular containers
// (scanned last to first, so the first container's state wins), then by
// deletion.
func summarizePod(pod *corev1.Pod) podSummary {
	s := podSummary{total: len(pod.Spec.Containers), status: string(pod.Status.Phase)}
	if pod.Status.Reason != "" {
		s.status = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			s.status = corev1.PodReasonSchedulingGated
		}
	}

	sidecars := map[string]bool{}
	for i := range pod.Spec.InitContainers {
		if isSidecar(&pod.Spec.InitContainers[i]) {
			sidecars[pod.Spec.InitContainers[i].Name] = true
			s.total++
		}
	}

	// Restarts count every init container while the pod initializes, and only
	// sidecars plus regular containers once it has.
	var sidecarRestarts int
	var lastSidecarRestart metav1.Time
	initializing := false
	for i, c := range pod.Status.InitContainerStatuses {
		s.restarts += int(c.RestartCount)
		laterOf(&s.lastRestart, c.LastTerminationState)
		if sidecars[c.Name] {
			sidecarRestarts += int(c.RestartCount)
			laterOf(&lastSidecarRestart, c.LastTerminationState)
		}
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case sidecars[c.Name] && c.Started != nil && *c.Started:
			if c.Ready {
				s.ready++
			}
			continue
		case c.State.Terminated != nil:
			s.status = "Init:" + terminatedReason(c.State.Terminated)
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			s.status = "Init:" + c.State.Waiting.Reason
		default:
			s.status = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}

	if !initializing || hasCondition(pod.Status.Conditions, corev1.PodInitialized) {
		s.restarts, s.lastRestart = sidecarRestarts, lastSidecarRestart
		running := false
		errorReason := ""
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			c := pod.Status.ContainerStatuses[i]
			s.restarts += int(c.RestartCount)
			laterOf(&s.lastRestart, c.LastTerminationState)
			switch {
			case c.State.Waiting != nil && c.State.Waiting.Reason != "":
				s.status = c.State.Waiting.Reason
			case c.State.Terminated != nil:
				s.status = terminatedReason(c.State.Terminated)
				if c.State.Terminated.ExitCode != 0 {
					errorReason = s.status
				}
			case c.Ready && c.State.Running != nil:
				running = true
				s.ready++
			}
		}
		// A finished container must not hide one still running, nor a failed one.
		if s.status == "Completed" {
			switch {
			case running && hasCondition(pod.Status.Conditions, corev1.PodReady):
				s.status = "Running"
			case errorReason != "":
				s.status = errorReason
			case running:
				s.status = "NotReady"
			}
		}
	}

	if pod.DeletionTimestamp != nil {
		switch {
		case pod.Status.Reason == nodeLostReason:
			s.status = "Unknown"
		case pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed:
			s.status = "Terminating"
		}
	}
	return s
}

// isSidecar reports whether an init container keeps running beside the
// regular ones (restartPolicy Always).
func isSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// terminatedReason names how a container ended: its reason, else its signal
// or exit code.
func terminatedReason(t *corev1.ContainerStateTerminated) string {
	switch {
	case t.Reason != "":
		return t.Reason
	case t.Signal != 0:
		return fmt.Sprintf("Signal:%d", t.Signal)
	default:
		return fmt.Sprintf("ExitCode:%d", t.ExitCode)
	}
}

// laterOf moves *last to the finish time of a previous termination when
// that is later.
func laterOf(last *metav1.Time, previous corev1.ContainerState) {
	if previous.Terminated == nil {
		return
	}
	finished := previous.Terminated.FinishedAt
	if last.Before(&finished) {
		*last = finished
	}
}

// hasCondition reports whether the first condition of type t is True.
func hasCondition(conditions []corev1.PodCondition, t corev1.PodConditionType) bool {
	for _, c := range conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// primaryPodIP is the pod's first IP. Like upstream's v1 conversion, podIP
// wins over podIPs when an old client set only (or a different) podIP.
func primaryPodIP(status *corev1.PodStatus) string {
	if status.PodIP != "" {
		return status.PodIP
	}
	if len(status.PodIPs) > 0 {
		return status.PodIPs[0].IP
	}
	return ""
}

// readinessGates counts the readiness gates whose condition is True.
func readinessGates(pod *corev1.Pod) string {
	if len(pod.Spec.ReadinessGates) == 0 {
		return none
	}
	met := 0
	for _, gate := range pod.Spec.ReadinessGates {
		for _, c := range pod.Status.Conditions {
			if c.Type == gate.ConditionType {
				if c.Status == corev1.ConditionTrue {
					met++
				}
				break
			}
		}
	}
	return fmt.Sprintf("%d/%d", met, len(pod.Spec.ReadinessGates))
}
