package podstatus

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"trireme.dev/kubelet/internal/podconfig"
)

// TestNormalizeStatus: times are kept to the second, as the API stores
// them, so that a status compares equal to its echo.
func TestNormalizeStatus(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 678, time.UTC))
	want := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	st := &corev1.PodStatus{
		StartTime:  &at,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, LastTransitionTime: at, LastProbeTime: at}},
		ContainerStatuses: []corev1.ContainerStatus{{
			State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: at, FinishedAt: at}},
		}},
		InitContainerStatuses: []corev1.ContainerStatus{{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: at, FinishedAt: at}}}},
	}
	normalizeStatus(st)
	got := []metav1.Time{*st.StartTime, st.Conditions[0].LastTransitionTime, st.Conditions[0].LastProbeTime,
		st.ContainerStatuses[0].State.Running.StartedAt, st.ContainerStatuses[0].LastTerminationState.Terminated.StartedAt,
		st.ContainerStatuses[0].LastTerminationState.Terminated.FinishedAt, st.InitContainerStatuses[0].State.Terminated.FinishedAt}
	for i, g := range got {
		if !g.Equal(&want) {
			t.Errorf("time %d = %v, want %v", i, g, want)
		}
	}
}

// stubProbes reports every container started, and ready unless named in
// notReady.
type stubProbes struct{ notReady map[string]bool }

func (p stubProbes) Ready(id string) bool { return !p.notReady[id] }
func (p stubProbes) Started(string) bool  { return true }

// TestCompute: the phase, container states and conditions follow what
// the runtime holds and what the worker knows of failed starts.
func TestCompute(t *testing.T) {
	container := func(id string, state runtimeapi.ContainerState, exitCode int32) *runtimeapi.ContainerStatus {
		return &runtimeapi.ContainerStatus{Id: id, State: state, ExitCode: exitCode, Labels: map[string]string{podconfig.LabelContainerName: "app"}}
	}
	sandbox := &runtimeapi.PodSandboxStatus{Network: &runtimeapi.PodSandboxNetworkStatus{Ip: "10.1.0.5"}}
	tests := []struct {
		name        string
		policy      corev1.RestartPolicy
		in          Input
		notReady    bool
		wantPhase   corev1.PodPhase
		wantWaiting string
		wantReady   bool
		wantPodIP   string
	}{
		{name: "nothing yet", policy: corev1.RestartPolicyAlways, wantPhase: corev1.PodPending, wantWaiting: "ContainerCreating"},
		{name: "running and ready", policy: corev1.RestartPolicyAlways, in: Input{SandboxReady: true, SandboxStatus: sandbox,
			Containers: []*runtimeapi.ContainerStatus{container("c1", runtimeapi.ContainerState_CONTAINER_RUNNING, 0)}},
			wantPhase: corev1.PodRunning, wantReady: true, wantPodIP: "10.1.0.5"},
		{name: "running, readiness probe failing", policy: corev1.RestartPolicyAlways, notReady: true, in: Input{SandboxReady: true, SandboxStatus: sandbox,
			Containers: []*runtimeapi.ContainerStatus{container("c1", runtimeapi.ContainerState_CONTAINER_RUNNING, 0)}},
			wantPhase: corev1.PodRunning, wantPodIP: "10.1.0.5"},
		{name: "exited 0 under Never", policy: corev1.RestartPolicyNever, in: Input{SandboxReady: true, SandboxStatus: sandbox,
			Containers: []*runtimeapi.ContainerStatus{container("c1", runtimeapi.ContainerState_CONTAINER_EXITED, 0)}},
			wantPhase: corev1.PodSucceeded, wantPodIP: "10.1.0.5"},
		{name: "crash looping", policy: corev1.RestartPolicyAlways, in: Input{SandboxReady: true, SandboxStatus: sandbox,
			Waiting:    map[string]Waiting{"app": {Reason: "CrashLoopBackOff", Message: "back-off"}},
			Containers: []*runtimeapi.ContainerStatus{container("c1", runtimeapi.ContainerState_CONTAINER_EXITED, 1)}},
			wantPhase: corev1.PodRunning, wantWaiting: "CrashLoopBackOff", wantPodIP: "10.1.0.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: tt.policy, Containers: []corev1.Container{{Name: "app", Image: "busybox",
				ReadinessProbe: &corev1.Probe{}}}}}
			in := tt.in
			in.Pod = pod
			c := &Computer{HostIPs: []string{"10.0.0.1"}, RuntimeName: "containerd", Probes: stubProbes{notReady: map[string]bool{"c1": tt.notReady}}}
			st := c.Compute(&in)
			if st.Phase != tt.wantPhase {
				t.Errorf("phase = %s, want %s", st.Phase, tt.wantPhase)
			}
			if st.HostIP != "10.0.0.1" || st.PodIP != tt.wantPodIP {
				t.Errorf("hostIP, podIP = %q, %q; want 10.0.0.1, %q", st.HostIP, st.PodIP, tt.wantPodIP)
			}
			cs := st.ContainerStatuses[0]
			if got := cs.State.Waiting; (got == nil) != (tt.wantWaiting == "") || (got != nil && got.Reason != tt.wantWaiting) {
				t.Errorf("waiting = %+v, want reason %q", got, tt.wantWaiting)
			}
			if cs.Ready != tt.wantReady || conditionTrue(st.Conditions, corev1.PodReady) != tt.wantReady {
				t.Errorf("container ready %v, PodReady %v; want %v", cs.Ready, conditionTrue(st.Conditions, corev1.PodReady), tt.wantReady)
			}
			if cs.ContainerID != "" && cs.ContainerID != "containerd://c1" {
				t.Errorf("container ID = %q", cs.ContainerID)
			}
			if st.QOSClass != corev1.PodQOSBestEffort || !conditionTrue(st.Conditions, corev1.PodScheduled) {
				t.Errorf("qos %s, conditions %+v", st.QOSClass, st.Conditions)
			}
		})
	}
}

func conditionTrue(cs []corev1.PodCondition, t corev1.PodConditionType) bool {
	for _, c := range cs {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
