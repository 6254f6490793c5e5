package kubelet

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"trireme.dev/kubelet/internal/podconfig"
)

// TestEphemeralContainers: an ephemeral container added to a running pod
// starts in its sandbox, once: it is never restarted, a missing target
// keeps it waiting, and its status is reported apart from the others'.
func TestEphemeralContainers(t *testing.T) {
	tests := []struct {
		name        string
		target      string
		exit        bool
		wantStarted bool
		wantWaiting string
	}{
		{name: "started", wantStarted: true},
		{name: "started in its target's namespace", target: "app", wantStarted: true},
		{name: "not restarted after it exits", exit: true, wantStarted: true},
		{name: "target missing", target: "nope", wantWaiting: "CreateContainerConfigError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testPod("debugged")
			f := newFixture(t, pod)
			w := newPodWorker(pod.UID)
			f.sync(t, w, pod)
			sandboxes := len(f.runtime.Sandboxes)

			debugged := pod.DeepCopy()
			debugged.Spec.EphemeralContainers = []corev1.EphemeralContainer{{
				EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debugger", Image: "busybox", ImagePullPolicy: corev1.PullIfNotPresent, Stdin: true, TTY: true},
				TargetContainerName:      tt.target,
			}}
			_, _, err := f.k.syncPod(context.Background(), w, debugged, false)
			if (err != nil) != (tt.wantWaiting != "") {
				t.Fatalf("sync: %v", err)
			}
			got := f.containers("debugger")
			if tt.wantStarted != (len(got) == 1) {
				t.Fatalf("%d debugger instances, want started %v", len(got), tt.wantStarted)
			}
			if len(f.runtime.Sandboxes) != sandboxes {
				t.Errorf("a new sandbox was made for the ephemeral container")
			}
			if tt.wantStarted {
				if got[0].Labels[podconfig.LabelContainerType] != podconfig.ContainerTypeEphemeral || got[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING {
					t.Errorf("debugger %+v", &got[0].ContainerStatus)
				}
				if id := f.containers("app")[0].Id; got[0].SandboxID != f.containers("app")[0].SandboxID {
					t.Errorf("debugger in sandbox %s, app %s in %s", got[0].SandboxID, id, f.containers("app")[0].SandboxID)
				}
			}
			if tt.exit {
				f.exit(got[0], 0)
				f.sync(t, w, debugged)
				f.sync(t, w, debugged)
				if n := len(f.containers("debugger")); n != 1 {
					t.Errorf("%d debugger instances: restarted", n)
				}
			}
			st := f.apiPod(t, "debugged").Status
			if len(st.EphemeralContainerStatuses) != 1 || st.EphemeralContainerStatuses[0].Name != "debugger" {
				t.Fatalf("ephemeral statuses %+v", st.EphemeralContainerStatuses)
			}
			es := st.EphemeralContainerStatuses[0]
			switch {
			case tt.wantWaiting != "":
				if es.State.Waiting == nil || es.State.Waiting.Reason != tt.wantWaiting {
					t.Errorf("debugger state %+v, want waiting %s", es.State, tt.wantWaiting)
				}
			case tt.exit:
				if es.State.Terminated == nil {
					t.Errorf("debugger state %+v, want terminated", es.State)
				}
			default:
				if es.State.Running == nil {
					t.Errorf("debugger state %+v, want running", es.State)
				}
			}
			if st.Phase != corev1.PodRunning || len(st.ContainerStatuses) != 1 {
				t.Errorf("phase %s, %d container statuses", st.Phase, len(st.ContainerStatuses))
			}
			if cid, _, err := f.k.Container(context.Background(), debugged, "debugger", false); tt.wantStarted && (err != nil || cid != got[0].Id) {
				t.Errorf("Container(debugger) = %q, %v; want %s (exec and logs find it)", cid, err, got[0].Id)
			}
		})
	}
}
