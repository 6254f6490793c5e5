package printers

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// now is the fixed clock of every printer test.
var now = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

// ago is a timestamp d before now.
func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func ptr[T any](v T) *T { return &v }

// cellsOf renders obj alone and returns its only row's cells.
func cellsOf(t *testing.T, obj runtime.Object) []any {
	t.Helper()
	tbl, err := render(obj, false, now)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	if len(tbl.Rows) != 1 {
		t.Fatalf("got %d rows, want 1", len(tbl.Rows))
	}
	if len(tbl.Rows[0].Cells) < len(tbl.ColumnDefinitions) {
		t.Fatalf("got %d cells for %d columns", len(tbl.Rows[0].Cells), len(tbl.ColumnDefinitions))
	}
	return tbl.Rows[0].Cells
}

func running(ready bool, restarts int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Ready: ready, RestartCount: restarts, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
}

func waiting(reason string) corev1.ContainerStatus {
	return corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}
}

func terminated(reason string, code int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: code}}}
}

func named(name string, s corev1.ContainerStatus) corev1.ContainerStatus {
	s.Name = name
	return s
}

func containers(names ...string) []corev1.Container {
	cs := make([]corev1.Container, len(names))
	for i, n := range names {
		cs[i] = corev1.Container{Name: n, Image: n + ":1"}
	}
	return cs
}

func TestPodCells(t *testing.T) {
	created := ago(10 * time.Minute)
	base := func(mutate func(p *corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", CreationTimestamp: created},
			Spec:       corev1.PodSpec{Containers: containers("app")},
			Status:     corev1.PodStatus{Phase: corev1.PodPending},
		}
		mutate(p)
		return p
	}
	always := ptr(corev1.ContainerRestartPolicyAlways)
	initialized := corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}
	podReady := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue}

	tests := []struct {
		name string
		pod  *corev1.Pod
		// want is READY, STATUS, RESTARTS.
		want []any
	}{
		{"pod pending unscheduled", base(func(*corev1.Pod) {}), []any{"0/1", "Pending", "0"}},
		{"pod scheduling gated", base(func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}}
		}), []any{"0/1", "SchedulingGated", "0"}},
		{"pod container creating", base(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{waiting("ContainerCreating")}
		}), []any{"0/1", "ContainerCreating", "0"}},
		{"pod running ready", base(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{running(true, 0)}
		}), []any{"1/1", "Running", "0"}},
		{"pod running two containers one not ready", base(func(p *corev1.Pod) {
			p.Spec.Containers = containers("a", "b")
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{running(true, 0), running(false, 0)}
		}), []any{"1/2", "Running", "0"}},
		{"pod completed", base(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodSucceeded
			p.Status.ContainerStatuses = []corev1.ContainerStatus{terminated("Completed", 0)}
		}), []any{"0/1", "Completed", "0"}},
		{"pod error", base(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.ContainerStatuses = []corev1.ContainerStatus{terminated("Error", 1)}
		}), []any{"0/1", "Error", "0"}},
		{"pod terminated without reason shows exit code", base(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.ContainerStatuses = []corev1.ContainerStatus{terminated("", 137)}
		}), []any{"0/1", "ExitCode:137", "0"}},
		{"pod terminated by signal", base(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			s := terminated("", 0)
			s.State.Terminated.Signal = 9
			p.Status.ContainerStatuses = []corev1.ContainerStatus{s}
		}), []any{"0/1", "Signal:9", "0"}},
		{"pod completed container beside failed one shows error", base(func(p *corev1.Pod) {
			p.Spec.Containers = containers("a", "b")
			p.Status.Phase = corev1.PodFailed
			p.Status.ContainerStatuses = []corev1.ContainerStatus{terminated("Completed", 0), terminated("Error", 2)}
		}), []any{"0/2", "Error", "0"}},
		{"pod completed container beside running ready one", base(func(p *corev1.Pod) {
			p.Spec.Containers = containers("a", "b")
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{podReady}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{terminated("Completed", 0), running(true, 0)}
		}), []any{"1/2", "Running", "0"}},
		{"pod completed container beside running one not ready", base(func(p *corev1.Pod) {
			p.Spec.Containers = containers("a", "b")
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{terminated("Completed", 0), running(true, 0)}
		}), []any{"1/2", "NotReady", "0"}},
		{"pod crash loop with restarts ago", base(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			s := waiting("CrashLoopBackOff")
			s.RestartCount = 4
			s.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: ago(90 * time.Second)}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{s}
		}), []any{"0/1", "CrashLoopBackOff", "4 (90s ago)"}},
		{"pod restarts without termination time", base(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{running(true, 3)}
		}), []any{"1/1", "Running", "3"}},
		{"pod first container state wins", base(func(p *corev1.Pod) {
			p.Spec.Containers = containers("a", "b")
			p.Status.ContainerStatuses = []corev1.ContainerStatus{waiting("ImagePullBackOff"), waiting("ContainerCreating")}
		}), []any{"0/2", "ImagePullBackOff", "0"}},
		{"pod init waiting counts", base(func(p *corev1.Pod) {
			p.Spec.InitContainers = containers("i1", "i2")
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{terminated("Completed", 0), waiting("PodInitializing")}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{waiting("PodInitializing")}
		}), []any{"0/1", "Init:1/2", "0"}},
		{"pod init image pull error", base(func(p *corev1.Pod) {
			p.Spec.InitContainers = containers("i1")
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{waiting("ErrImagePull")}
		}), []any{"0/1", "Init:ErrImagePull", "0"}},
		{"pod init failed", base(func(p *corev1.Pod) {
			p.Spec.InitContainers = containers("i1")
			s := terminated("Error", 1)
			s.RestartCount = 2
			s.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{FinishedAt: ago(5 * time.Minute)}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{s}
		}), []any{"0/1", "Init:Error", "2 (5m ago)"}},
		{"pod init failed without reason", base(func(p *corev1.Pod) {
			p.Spec.InitContainers = containers("i1")
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{terminated("", 3)}
		}), []any{"0/1", "Init:ExitCode:3", "0"}},
		{"pod sidecar started and ready counts as container", base(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: always}}
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{initialized, podReady}
			sidecar := named("proxy", running(true, 1))
			sidecar.Started = ptr(true)
			sidecar.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{FinishedAt: ago(2 * time.Hour)}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{sidecar}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{running(true, 0)}
		}), []any{"2/2", "Running", "1 (120m ago)"}},
		{"pod sidecar not started keeps initializing", base(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: always}}
			sidecar := named("proxy", running(false, 0))
			sidecar.Started = ptr(false)
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{sidecar}
		}), []any{"0/2", "Init:0/1", "0"}},
		{"pod terminating", base(func(p *corev1.Pod) {
			p.DeletionTimestamp = ptr(ago(time.Second))
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{running(true, 0)}
		}), []any{"1/1", "Terminating", "0"}},
		{"pod deleted after success stays completed", base(func(p *corev1.Pod) {
			p.DeletionTimestamp = ptr(ago(time.Second))
			p.Status.Phase = corev1.PodSucceeded
			p.Status.ContainerStatuses = []corev1.ContainerStatus{terminated("Completed", 0)}
		}), []any{"0/1", "Completed", "0"}},
		{"pod on lost node is unknown", base(func(p *corev1.Pod) {
			p.DeletionTimestamp = ptr(ago(time.Second))
			p.Status.Phase = corev1.PodRunning
			p.Status.Reason = nodeLostReason
		}), []any{"0/1", "Unknown", "0"}},
		{"pod evicted shows status reason", base(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.Reason = "Evicted"
		}), []any{"0/1", "Evicted", "0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cells := cellsOf(t, tt.pod)
			got := []any{cells[1], cells[2], cells[3]}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("READY, STATUS, RESTARTS = %#v, want %#v", got, tt.want)
			}
			if cells[0] != "web" || cells[4] != "10m" {
				t.Errorf("NAME, AGE = %v, %v", cells[0], cells[4])
			}
		})
	}
}

func TestPodWideCells(t *testing.T) {
	tests := []struct {
		name string
		pod  corev1.Pod
		want []any
	}{
		{"pod wide unset", corev1.Pod{}, []any{"<none>", "<none>", "<none>", "<none>"}},
		{"pod wide set", corev1.Pod{
			Spec: corev1.PodSpec{NodeName: "n1", ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "a"}, {ConditionType: "b"}}},
			Status: corev1.PodStatus{
				PodIPs:            []corev1.PodIP{{IP: "10.0.0.5"}, {IP: "fd00::5"}},
				NominatedNodeName: "n2",
				Conditions:        []corev1.PodCondition{{Type: "a", Status: corev1.ConditionTrue}, {Type: "b", Status: corev1.ConditionFalse}},
			},
		}, []any{"10.0.0.5", "n1", "n2", "1/2"}},
		{"pod wide podIP wins", corev1.Pod{Status: corev1.PodStatus{PodIP: "10.0.0.9", PodIPs: []corev1.PodIP{{IP: "10.0.0.5"}}}},
			[]any{"10.0.0.9", "<none>", "<none>", "<none>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cells := cellsOf(t, &tt.pod)
			if got := cells[5:]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("wide cells = %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestPodRowConditions(t *testing.T) {
	for _, tt := range []struct {
		phase  corev1.PodPhase
		reason string
	}{{corev1.PodSucceeded, "Succeeded"}, {corev1.PodFailed, "Failed"}, {corev1.PodRunning, ""}} {
		t.Run("pod row condition "+string(tt.phase), func(t *testing.T) {
			tbl, err := render(&corev1.Pod{Status: corev1.PodStatus{Phase: tt.phase}}, false, now)
			if err != nil {
				t.Fatal(err)
			}
			conds := tbl.Rows[0].Conditions
			if tt.reason == "" {
				if len(conds) != 0 {
					t.Errorf("conditions = %v, want none", conds)
				}
				return
			}
			if len(conds) != 1 || conds[0].Type != metav1.RowCompleted || conds[0].Reason != tt.reason {
				t.Errorf("conditions = %v, want Completed/%s", conds, tt.reason)
			}
		})
	}
}
