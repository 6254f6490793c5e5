package podstatus

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
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

// instance is a runtime container instance of the named container.
func instance(name, id string, state runtimeapi.ContainerState, exitCode int32) *runtimeapi.ContainerStatus {
	return &runtimeapi.ContainerStatus{Id: id, State: state, ExitCode: exitCode, Labels: map[string]string{podconfig.LabelContainerName: name}}
}

func findCondition(cs []corev1.PodCondition, t corev1.PodConditionType) corev1.PodCondition {
	for _, c := range cs {
		if c.Type == t {
			return c
		}
	}
	return corev1.PodCondition{}
}

// TestInitContainerConditions: init containers are ready once they
// succeeded, and the pod's conditions carry upstream's reasons and
// messages, naming the containers that hold them back.
func TestInitContainerConditions(t *testing.T) {
	const (
		running = runtimeapi.ContainerState_CONTAINER_RUNNING
		exited  = runtimeapi.ContainerState_CONTAINER_EXITED
	)
	sandbox := &runtimeapi.PodSandboxStatus{Network: &runtimeapi.PodSandboxNetworkStatus{Ip: "10.1.0.5"}}
	type cond struct {
		status          corev1.ConditionStatus
		reason, message string
	}
	tests := []struct {
		name           string
		policy         corev1.RestartPolicy
		containers     []*runtimeapi.ContainerStatus
		waiting        map[string]Waiting
		wantPhase      corev1.PodPhase
		wantInitReady  []bool
		wantInit       cond
		wantReady      cond
		wantAppWaiting string
	}{
		{
			name: "first init container running", policy: corev1.RestartPolicyAlways,
			containers: []*runtimeapi.ContainerStatus{instance("init1", "i1", running, 0)},
			wantPhase:  corev1.PodPending, wantInitReady: []bool{false, false},
			wantInit:       cond{corev1.ConditionFalse, "ContainersNotInitialized", "containers with incomplete status: [init1 init2]"},
			wantReady:      cond{corev1.ConditionFalse, "ContainersNotReady", "containers with unready status: [run1]"},
			wantAppWaiting: "PodInitializing",
		},
		{
			name: "first init container failing under Always", policy: corev1.RestartPolicyAlways,
			containers: []*runtimeapi.ContainerStatus{instance("init1", "i1", exited, 1)},
			waiting:    map[string]Waiting{"init1": {Reason: "CrashLoopBackOff"}},
			wantPhase:  corev1.PodPending, wantInitReady: []bool{false, false},
			wantInit:       cond{corev1.ConditionFalse, "ContainersNotInitialized", "containers with incomplete status: [init1 init2]"},
			wantReady:      cond{corev1.ConditionFalse, "ContainersNotReady", "containers with unready status: [run1]"},
			wantAppWaiting: "PodInitializing",
		},
		{
			name: "second init container failed under Never", policy: corev1.RestartPolicyNever,
			containers: []*runtimeapi.ContainerStatus{instance("init2", "i2", exited, 1), instance("init1", "i1", exited, 0)},
			wantPhase:  corev1.PodFailed, wantInitReady: []bool{true, false},
			wantInit:       cond{corev1.ConditionFalse, "ContainersNotInitialized", "containers with incomplete status: [init2]"},
			wantReady:      cond{corev1.ConditionFalse, "PodFailed", ""},
			wantAppWaiting: "PodInitializing",
		},
		{
			name: "initialized and running", policy: corev1.RestartPolicyAlways,
			containers: []*runtimeapi.ContainerStatus{instance("run1", "r1", running, 0), instance("init2", "i2", exited, 0), instance("init1", "i1", exited, 0)},
			wantPhase:  corev1.PodRunning, wantInitReady: []bool{true, true},
			wantInit:  cond{corev1.ConditionTrue, "", ""},
			wantReady: cond{corev1.ConditionTrue, "", ""},
		},
		{
			name: "all done under Never", policy: corev1.RestartPolicyNever,
			containers: []*runtimeapi.ContainerStatus{instance("run1", "r1", exited, 0), instance("init2", "i2", exited, 0), instance("init1", "i1", exited, 0)},
			wantPhase:  corev1.PodSucceeded, wantInitReady: []bool{true, true},
			wantInit:  cond{corev1.ConditionTrue, "PodCompleted", ""},
			wantReady: cond{corev1.ConditionFalse, "PodCompleted", ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Generation: 3},
				Spec: corev1.PodSpec{RestartPolicy: tt.policy,
					InitContainers: []corev1.Container{{Name: "init1", Image: "busybox"}, {Name: "init2", Image: "busybox"}},
					Containers:     []corev1.Container{{Name: "run1", Image: "busybox"}}},
				// The scheduler's condition, for the generation it bound.
				Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, ObservedGeneration: 1}}}}
			c := &Computer{RuntimeName: "containerd", Probes: stubProbes{}}
			st := c.Compute(&Input{Pod: pod, SandboxReady: true, SandboxStatus: sandbox, Containers: tt.containers, Waiting: tt.waiting})
			if st.Phase != tt.wantPhase {
				t.Errorf("phase = %s, want %s", st.Phase, tt.wantPhase)
			}
			for i, want := range tt.wantInitReady {
				if got := st.InitContainerStatuses[i].Ready; got != want {
					t.Errorf("init container %d ready = %v, want %v", i, got, want)
				}
			}
			for _, check := range []struct {
				t    corev1.PodConditionType
				want cond
			}{{corev1.PodInitialized, tt.wantInit}, {corev1.ContainersReady, tt.wantReady}, {corev1.PodReady, tt.wantReady}, {corev1.PodScheduled, cond{status: corev1.ConditionTrue}}} {
				got := findCondition(st.Conditions, check.t)
				if (cond{got.Status, got.Reason, got.Message}) != check.want {
					t.Errorf("%s = %s %q %q, want %+v", check.t, got.Status, got.Reason, got.Message, check.want)
				}
				if got.ObservedGeneration != 3 {
					t.Errorf("%s observedGeneration = %d, want 3", check.t, got.ObservedGeneration)
				}
			}
			if w := st.ContainerStatuses[0].State.Waiting; (w == nil) != (tt.wantAppWaiting == "") || (w != nil && w.Reason != tt.wantAppWaiting) {
				t.Errorf("app container waiting = %+v, want reason %q", w, tt.wantAppWaiting)
			}
			if st.ObservedGeneration != 3 {
				t.Errorf("observedGeneration = %d, want 3", st.ObservedGeneration)
			}
		})
	}
}

// TestReadinessGateMessages: with its containers ready, a pod is Ready
// only when its readiness gates are, and says which are not.
func TestReadinessGateMessages(t *testing.T) {
	tests := []struct {
		name        string
		conditions  []corev1.PodCondition
		wantStatus  corev1.ConditionStatus
		wantMessage string
	}{
		{name: "gate missing", wantStatus: corev1.ConditionFalse, wantMessage: `corresponding condition of pod readiness gate "example.com/lb" does not exist.`},
		{name: "gate false", conditions: []corev1.PodCondition{{Type: "example.com/lb", Status: corev1.ConditionFalse}},
			wantStatus: corev1.ConditionFalse, wantMessage: `the status of pod readiness gate "example.com/lb" is not "True", but False`},
		{name: "gate true", conditions: []corev1.PodCondition{{Type: "example.com/lb", Status: corev1.ConditionTrue}}, wantStatus: corev1.ConditionTrue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways, ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "example.com/lb"}},
					Containers: []corev1.Container{{Name: "app", Image: "busybox"}}},
				Status: corev1.PodStatus{Conditions: tt.conditions},
			}
			c := &Computer{RuntimeName: "containerd", Probes: stubProbes{}}
			st := c.Compute(&Input{Pod: pod, SandboxReady: true, Containers: []*runtimeapi.ContainerStatus{instance("app", "a", runtimeapi.ContainerState_CONTAINER_RUNNING, 0)}})
			got := findCondition(st.Conditions, corev1.PodReady)
			if got.Status != tt.wantStatus || got.Message != tt.wantMessage {
				t.Errorf("Ready = %s %q %q, want %s %q", got.Status, got.Reason, got.Message, tt.wantStatus, tt.wantMessage)
			}
			if !conditionTrue(st.Conditions, corev1.ContainersReady) {
				t.Errorf("ContainersReady not true: %+v", st.Conditions)
			}
		})
	}
}

// TestEphemeralContainerStatuses: each ephemeral container has a status
// of its own, which counts for neither the phase nor readiness.
func TestEphemeralContainerStatuses(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways,
		Containers: []corev1.Container{{Name: "app", Image: "busybox"}},
		EphemeralContainers: []corev1.EphemeralContainer{
			{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger", Image: "busybox"}},
			{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger2", Image: "busybox"}},
		}}}
	c := &Computer{RuntimeName: "containerd", Probes: stubProbes{}}
	st := c.Compute(&Input{Pod: pod, SandboxReady: true, Containers: []*runtimeapi.ContainerStatus{
		instance("debugger", "d", runtimeapi.ContainerState_CONTAINER_RUNNING, 0),
		instance("app", "a", runtimeapi.ContainerState_CONTAINER_RUNNING, 0),
	}})
	if len(st.EphemeralContainerStatuses) != 2 {
		t.Fatalf("%d ephemeral statuses, want 2", len(st.EphemeralContainerStatuses))
	}
	if got := st.EphemeralContainerStatuses[0]; got.Name != "debugger" || got.State.Running == nil || got.ContainerID != "containerd://d" {
		t.Errorf("debugger status %+v", got)
	}
	if got := st.EphemeralContainerStatuses[1]; got.Name != "debugger2" || got.State.Waiting == nil || got.State.Waiting.Reason != "ContainerCreating" {
		t.Errorf("debugger2 status %+v", got)
	}
	if st.Phase != corev1.PodRunning || !conditionTrue(st.Conditions, corev1.PodReady) {
		t.Errorf("phase %s, conditions %+v", st.Phase, st.Conditions)
	}
}

// TestTerminationMessage: the file the container wrote wins; under
// FallbackToLogsOnError a failed container that wrote none gets the end
// of its log, as upstream bounds it.
func TestTerminationMessage(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	criLog := func(lines ...string) string {
		var b strings.Builder
		for _, l := range lines {
			fmt.Fprintf(&b, "2026-01-02T03:04:05.000000000Z stdout F %s\n", l)
		}
		return b.String()
	}
	var many []string
	for i := range 100 {
		many = append(many, fmt.Sprintf("line %03d", i))
	}
	long := strings.Repeat("x", 5000) + "END"
	tests := []struct {
		name     string
		file     string
		log      string
		policy   corev1.TerminationMessagePolicy
		exitCode int32
		reason   string
		// runtimeMessage is the runtime's own message, joined before.
		runtimeMessage string
		want           string
	}{
		{name: "file", file: "DONE", policy: corev1.TerminationMessageReadFile, exitCode: 0, want: "DONE"},
		{name: "file wins over the log", file: "OK", log: criLog("DONE"), policy: corev1.TerminationMessageFallbackToLogsOnError, exitCode: 1, want: "OK"},
		{name: "log of a failed container", log: "2026-01-02T03:04:05.000000000Z stdout P DONE\n", policy: corev1.TerminationMessageFallbackToLogsOnError, exitCode: 1, want: "DONE"},
		{name: "no log for a success", log: criLog("DONE"), policy: corev1.TerminationMessageFallbackToLogsOnError, exitCode: 0, want: ""},
		{name: "no log under File", log: criLog("DONE"), policy: corev1.TerminationMessageReadFile, exitCode: 1, want: ""},
		{name: "no log for one that could not run", log: criLog("DONE"), policy: corev1.TerminationMessageFallbackToLogsOnError, exitCode: 128, reason: "ContainerCannotRun", want: ""},
		{name: "last 80 lines of the log", log: criLog(many...), policy: corev1.TerminationMessageFallbackToLogsOnError, exitCode: 2, want: strings.Join(many[20:], "\n") + "\n"},
		{name: "after the runtime's message", file: "DONE", policy: corev1.TerminationMessageReadFile, exitCode: 137, runtimeMessage: "OOMKilled", want: "OOMKilled: DONE"},
		{name: "end of a long file", file: long, policy: corev1.TerminationMessageReadFile, want: long[len(long)-4096:]},
		{name: "end of a long log", log: criLog(long), policy: corev1.TerminationMessageFallbackToLogsOnError, exitCode: 1, want: (long + "\n")[len(long)+1-2048:]},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := instance("app", "a", runtimeapi.ContainerState_CONTAINER_EXITED, tt.exitCode)
			cs.Reason, cs.Message = tt.reason, tt.runtimeMessage
			cs.Annotations = map[string]string{
				podconfig.AnnotationTerminationMessagePath:   "/dev/termination-log",
				podconfig.AnnotationTerminationMessagePolicy: string(tt.policy),
			}
			cs.Mounts = []*runtimeapi.Mount{{ContainerPath: "/dev/termination-log", HostPath: write(fmt.Sprintf("term-%d", i), tt.file)}}
			cs.LogPath = write(fmt.Sprintf("%d.log", i), tt.log)
			pod := &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}
			c := &Computer{RuntimeName: "containerd", Probes: stubProbes{}}
			st := c.Compute(&Input{Pod: pod, Containers: []*runtimeapi.ContainerStatus{cs}})
			term := st.ContainerStatuses[0].State.Terminated
			if term == nil {
				t.Fatalf("not terminated: %+v", st.ContainerStatuses[0].State)
			}
			if term.Message != tt.want {
				t.Errorf("message = %q, want %q", term.Message, tt.want)
			}
		})
	}
}

// TestContainerResources: a container the runtime has reports the
// requests allocated to it and the resources its running instance was
// given (its allocation when not running or not known); resize
// conditions carry their own generation.
func TestContainerResources(t *testing.T) {
	list := func(cpu string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
	spec := corev1.ResourceRequirements{Requests: list("30m"), Limits: list("40m")}
	allocated := corev1.ResourceRequirements{Requests: list("20m"), Limits: list("40m")}
	actuated := corev1.ResourceRequirements{Requests: list("10m")}
	running := &runtimeapi.ContainerStatus{Id: "c1", State: runtimeapi.ContainerState_CONTAINER_RUNNING, Labels: map[string]string{podconfig.LabelContainerName: "app"}}
	exited := &runtimeapi.ContainerStatus{Id: "c1", State: runtimeapi.ContainerState_CONTAINER_EXITED, Labels: map[string]string{podconfig.LabelContainerName: "app"}}
	tests := []struct {
		name          string
		containers    []*runtimeapi.ContainerStatus
		allocated     map[string]corev1.ResourceRequirements
		actuated      map[string]corev1.ResourceRequirements
		wantResources *corev1.ResourceRequirements
		wantAllocated corev1.ResourceList
	}{
		{"not created: none", nil, nil, nil, nil, nil},
		{"no allocation: the spec's", []*runtimeapi.ContainerStatus{running}, nil, nil, &spec, spec.Requests},
		{"running: what it was given", []*runtimeapi.ContainerStatus{running}, map[string]corev1.ResourceRequirements{"app": allocated}, map[string]corev1.ResourceRequirements{"c1": actuated}, &actuated, allocated.Requests},
		{"running, not known: the allocation", []*runtimeapi.ContainerStatus{running}, map[string]corev1.ResourceRequirements{"app": allocated}, nil, &allocated, allocated.Requests},
		{"exited: the allocation", []*runtimeapi.ContainerStatus{exited}, map[string]corev1.ResourceRequirements{"app": allocated}, map[string]corev1.ResourceRequirements{"c1": actuated}, &allocated, allocated.Requests},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: spec}}}}
			pending := corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonDeferred, ObservedGeneration: 2}
			c := &Computer{RuntimeName: "containerd", Probes: stubProbes{}}
			st := c.Compute(&Input{Pod: pod, SandboxReady: true, Containers: tt.containers, Allocated: tt.allocated, Actuated: tt.actuated, ResizeConditions: []corev1.PodCondition{pending}})
			cs := st.ContainerStatuses[0]
			if !apiequality.Semantic.DeepEqual(cs.Resources, tt.wantResources) || !apiequality.Semantic.DeepEqual(cs.AllocatedResources, tt.wantAllocated) {
				t.Errorf("resources %v allocated %v, want %v and %v", cs.Resources, cs.AllocatedResources, tt.wantResources, tt.wantAllocated)
			}
			var got *corev1.PodCondition
			for i := range st.Conditions {
				if st.Conditions[i].Type == corev1.PodResizePending {
					got = &st.Conditions[i]
				}
			}
			if got == nil || got.ObservedGeneration != 2 || got.Reason != corev1.PodReasonDeferred {
				t.Errorf("PodResizePending %+v, want Deferred at generation 2", got)
			}
		})
	}
}

func TestTerminate(t *testing.T) {
	waiting := corev1.ContainerStatus{Name: "c", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}
	exited := corev1.ContainerStatus{Name: "done", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}
	initialized := func(s corev1.ConditionStatus) []corev1.PodCondition {
		return []corev1.PodCondition{{Type: corev1.PodInitialized, Status: s}}
	}
	tests := []struct {
		name      string
		in        corev1.PodStatus
		static    bool
		wantPhase corev1.PodPhase
		// wantApp and wantInit are the containers' terminated reasons ("" for
		// not terminated), in order.
		wantApp, wantInit []string
	}{
		{"deleted before its container started: Failed, the container unknown",
			corev1.PodStatus{Phase: corev1.PodPending, Conditions: initialized(corev1.ConditionTrue), ContainerStatuses: []corev1.ContainerStatus{waiting}},
			false, corev1.PodFailed, []string{"ContainerStatusUnknown"}, nil},
		{"a container that ran keeps its state",
			corev1.PodStatus{Phase: corev1.PodRunning, Conditions: initialized(corev1.ConditionTrue), ContainerStatuses: []corev1.ContainerStatus{exited, waiting}},
			false, corev1.PodFailed, []string{"Completed", "ContainerStatusUnknown"}, nil},
		{"already Succeeded stays so",
			corev1.PodStatus{Phase: corev1.PodSucceeded, Conditions: initialized(corev1.ConditionTrue), ContainerStatuses: []corev1.ContainerStatus{exited}},
			false, corev1.PodSucceeded, []string{"Completed"}, nil},
		{"not initialized: the init container unknown, the app container left waiting",
			corev1.PodStatus{Phase: corev1.PodPending, Conditions: initialized(corev1.ConditionFalse),
				InitContainerStatuses: []corev1.ContainerStatus{waiting}, ContainerStatuses: []corev1.ContainerStatus{waiting}},
			false, corev1.PodFailed, []string{""}, []string{"ContainerStatusUnknown"}},
		{"a static pod keeps its phase",
			corev1.PodStatus{Phase: corev1.PodPending, Conditions: initialized(corev1.ConditionTrue), ContainerStatuses: []corev1.ContainerStatus{waiting}},
			true, corev1.PodPending, []string{"ContainerStatusUnknown"}, nil},
	}
	reasons := func(cs []corev1.ContainerStatus) []string {
		var out []string
		for _, c := range cs {
			r := ""
			if c.State.Terminated != nil {
				r = c.State.Terminated.Reason
			}
			out = append(out, r)
		}
		return out
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tt.in.DeepCopy()
			Terminate(st, tt.static)
			if st.Phase != tt.wantPhase {
				t.Errorf("phase %s, want %s", st.Phase, tt.wantPhase)
			}
			if got := reasons(st.ContainerStatuses); !slices.Equal(got, tt.wantApp) {
				t.Errorf("containers %q, want %q", got, tt.wantApp)
			}
			if got := reasons(st.InitContainerStatuses); !slices.Equal(got, tt.wantInit) {
				t.Errorf("init containers %q, want %q", got, tt.wantInit)
			}
			for _, c := range st.ContainerStatuses {
				if term := c.State.Terminated; term != nil && term.Reason == "ContainerStatusUnknown" && (term.ExitCode != 137 || c.State.Waiting != nil) {
					t.Errorf("container %s: %+v, want exit code 137 and no waiting state", c.Name, c.State)
				}
			}
		})
	}
}
