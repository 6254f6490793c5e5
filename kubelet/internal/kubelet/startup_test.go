package kubelet

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestStatusEcho(t *testing.T) {
	base := testPod("p")
	base.ResourceVersion = "1"
	base.Status.Phase = corev1.PodPending
	scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}
	written := &corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, scheduled}}
	tests := []struct {
		name    string
		change  func(p *corev1.Pod)
		written *corev1.PodStatus
		want    bool
	}{
		{name: "kubelet status and resourceVersion only", change: func(p *corev1.Pod) {
			p.ResourceVersion = "2"
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Ready: true}}
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}, want: true},
		{name: "the kubelet's own write: phase and PodScheduled", written: written, change: func(p *corev1.Pod) {
			p.Status = *written.DeepCopy()
		}, want: true},
		{name: "phase set by someone else", written: written, change: func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }, want: false},
		{name: "phase before the kubelet wrote any", change: func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }, want: false},
		{name: "readiness gate condition", written: written, change: func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: "example.com/gate", Status: corev1.ConditionTrue}}
		}, want: false},
		{name: "deletion", change: func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: time.Now()} }, want: false},
		{name: "spec", change: func(p *corev1.Pod) { p.Spec.Containers[0].Image = "other" }, want: false},
		{name: "labels", change: func(p *corev1.Pod) { p.Labels = map[string]string{"a": "b"} }, want: false},
		{name: "annotations", change: func(p *corev1.Pod) { p.Annotations = map[string]string{"a": "b"} }, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cur := base.DeepCopy()
			tt.change(cur)
			if got := statusEcho(base, cur, tt.written); got != tt.want {
				t.Errorf("statusEcho = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFingerprintIgnoresListOrder(t *testing.T) {
	a := fingerprint([]string{sandboxEntry("s1", runtimeapi.PodSandboxState_SANDBOX_READY), containerEntry("c1", runtimeapi.ContainerState_CONTAINER_EXITED), containerEntry("c2", runtimeapi.ContainerState_CONTAINER_RUNNING)})
	b := fingerprint([]string{containerEntry("c2", runtimeapi.ContainerState_CONTAINER_RUNNING), containerEntry("c1", runtimeapi.ContainerState_CONTAINER_EXITED), sandboxEntry("s1", runtimeapi.PodSandboxState_SANDBOX_READY)})
	if a != b {
		t.Errorf("fingerprints differ by order: %q, %q", a, b)
	}
	c := fingerprint([]string{sandboxEntry("s1", runtimeapi.PodSandboxState_SANDBOX_READY), containerEntry("c1", runtimeapi.ContainerState_CONTAINER_EXITED), containerEntry("c2", runtimeapi.ContainerState_CONTAINER_EXITED)})
	if a == c {
		t.Errorf("a state change leaves the fingerprint as it was: %q", a)
	}
}

// TestOwnChangesDoNotWakeWorker: after a sync starts a pod's sandbox and
// container, relist finds nothing the worker has not seen.
func TestOwnChangesDoNotWakeWorker(t *testing.T) {
	pod := testPod("own")
	f := newFixture(t, pod)
	w := f.syncedWorker(t, pod)
	f.k.relist(context.Background())
	select {
	case <-w.wakeCh:
		t.Fatal("relist woke the worker for the containers it started itself")
	default:
	}
	// A container exiting is news.
	f.exit(f.containers("app")[0], 1)
	f.k.relist(context.Background())
	select {
	case <-w.wakeCh:
	default:
		t.Fatal("relist did not wake the worker when its container exited")
	}
}

// TestStatusEchoDoesNotWakeWorker: the kubelet's own status patch coming
// back through the informer does not sync the pod again.
func TestStatusEchoDoesNotWakeWorker(t *testing.T) {
	pod := testPod("echo")
	f := newFixture(t)
	ctx := context.Background()
	w := f.idleWorker(pod)
	echo := pod.DeepCopy()
	echo.ResourceVersion = "2"
	echo.Status.Phase = ""
	echo.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	f.k.UpsertPod(ctx, echo)
	select {
	case <-w.wakeCh:
		t.Fatal("a status echo woke the worker")
	default:
	}
	if got, _ := w.snapshot(); got.ResourceVersion != "2" {
		t.Errorf("the worker keeps resourceVersion %q, want the echo's", got.ResourceVersion)
	}
	changed := echo.DeepCopy()
	changed.Labels = map[string]string{"new": "label"}
	f.k.UpsertPod(ctx, changed)
	select {
	case <-w.wakeCh:
	default:
		t.Fatal("a label change did not wake the worker")
	}
}

// TestOlderStatusIsWrittenAgain: an API pod whose status comes back as
// other than the kubelet last wrote (an older patch applied late) wakes
// its worker to write it again; its own write coming back does not.
func TestOlderStatusIsWrittenAgain(t *testing.T) {
	pod := testPod("late")
	f := newFixture(t)
	ctx := context.Background()
	w := f.idleWorker(pod)
	w.status = &corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	echo := pod.DeepCopy()
	echo.ResourceVersion = "2"
	echo.Status = *w.status.DeepCopy()
	f.k.UpsertPod(ctx, echo)
	select {
	case <-w.wakeCh:
		t.Fatal("the kubelet's own status coming back woke the worker")
	default:
	}
	older := echo.DeepCopy()
	older.ResourceVersion = "3"
	older.Status.Conditions[0].Status = corev1.ConditionFalse
	f.k.UpsertPod(ctx, older)
	select {
	case <-w.wakeCh:
	default:
		t.Fatal("an older status in the API did not wake the worker")
	}
	if !w.unwritten {
		t.Error("the worker does not write its status again")
	}
}

// TestSandboxSlotGivesWayToDeletion: a pod waiting for a sandbox slot
// stops waiting when it is deleted.
func TestSandboxSlotGivesWayToDeletion(t *testing.T) {
	f := newFixture(t)
	k := f.k
	for range cap(k.sandboxSlots) {
		k.sandboxSlots <- struct{}{}
	}
	pod := testPod("waiting")
	w := newPodWorker(pod.UID)
	w.update(pod)
	<-w.wakeCh
	got := make(chan bool)
	go func() { got <- k.acquireSandboxSlot(context.Background(), w) != nil }()
	// A change that is not a deletion keeps it waiting.
	w.update(pod)
	select {
	case ok := <-got:
		t.Fatalf("acquire returned %v while every slot was taken", ok)
	case <-time.After(50 * time.Millisecond):
	}
	deleted := pod.DeepCopy()
	deleted.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	w.update(deleted)
	if ok := <-got; ok {
		t.Fatal("acquire succeeded with every slot taken")
	}
	select {
	case <-w.wakeCh:
	default:
		t.Error("the worker was not woken to handle the deletion")
	}
	// A freed slot goes to the next waiter.
	<-k.sandboxSlots
	release := k.acquireSandboxSlot(context.Background(), w)
	if release == nil {
		t.Fatal("acquire failed with a free slot")
	}
	release()
	release()
	if len(k.sandboxSlots) != cap(k.sandboxSlots)-1 {
		t.Errorf("%d slots taken after a release (twice), want %d", len(k.sandboxSlots), cap(k.sandboxSlots)-1)
	}
}
