package kubelet

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A static pod's status goes to its mirror pod, by name. A changed
// manifest replaces the mirror: the new one is created empty, after the
// status was written to the old one, and gets it once MirrorSeen says it
// is there, empty. A mirror holding an older status than the one written
// (a patch given up on that reached the apiserver late) gets it again; one
// holding what was written is left alone. Before any mirror exists, the status is written on a later
// sync.
func TestStaticPodStatusReachesItsMirror(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	pod := testPod("etcd-node-1")
	pod.Annotations = map[string]string{annotationConfigSource: "file"}
	pods := f.client.CoreV1().Pods(pod.Namespace)
	createMirror := func(uid types.UID) {
		t.Helper()
		mirror := pod.DeepCopy()
		mirror.UID = uid
		mirror.Annotations = map[string]string{"kubernetes.io/config.mirror": string(pod.UID)}
		if _, err := pods.Create(ctx, mirror, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	phase := func() corev1.PodPhase {
		t.Helper()
		got, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got.Status.Phase
	}

	w := f.syncedWorker(t, pod) // no mirror pod yet: nothing to patch
	createMirror("mirror-1")
	f.sync(t, w, pod)
	if got := phase(); got != corev1.PodRunning {
		t.Fatalf("first mirror's phase %q, want Running", got)
	}

	if err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	createMirror("mirror-2")
	f.sync(t, w, pod)
	if got := phase(); got != "" {
		t.Fatalf("the unchanged status was written again without MirrorSeen: %q", got)
	}
	f.k.MirrorSeen(pod.UID, &corev1.PodStatus{})
	f.sync(t, w, pod)
	if got := phase(); got != corev1.PodRunning {
		t.Fatalf("new mirror's phase %q after MirrorSeen and a sync, want Running", got)
	}

	written, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.k.MirrorSeen(pod.UID, &written.Status)
	stale := written.DeepCopy()
	stale.Status.Phase = corev1.PodPending
	if _, err := pods.UpdateStatus(ctx, stale, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.sync(t, w, pod)
	if got := phase(); got != corev1.PodPending {
		t.Fatalf("phase %q: the status was written again though the mirror held it", got)
	}
	f.k.MirrorSeen(pod.UID, &stale.Status)
	f.sync(t, w, pod)
	if got := phase(); got != corev1.PodRunning {
		t.Errorf("mirror's phase %q after MirrorSeen of an older status and a sync, want Running", got)
	}
}

func TestSameStatus(t *testing.T) {
	ready := func(s corev1.ConditionStatus) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.PodReady, Status: s, LastTransitionTime: metav1.Now()}
	}
	running := corev1.ContainerStatus{Name: "c", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}
	base := corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{ready(corev1.ConditionTrue)}, ContainerStatuses: []corev1.ContainerStatus{running}}
	for _, tc := range []struct {
		name   string
		change func(*corev1.PodStatus)
		same   bool
	}{
		{"equal", func(*corev1.PodStatus) {}, true},
		{"times kept to the second", func(s *corev1.PodStatus) {
			s.Conditions[0].LastTransitionTime = metav1.NewTime(s.Conditions[0].LastTransitionTime.Truncate(time.Second))
		}, true},
		{"a condition the kubelet does not own", func(s *corev1.PodStatus) {
			s.Conditions = append(s.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue})
		}, true},
		{"not ready", func(s *corev1.PodStatus) { s.Conditions[0] = ready(corev1.ConditionFalse) }, false},
		{"phase", func(s *corev1.PodStatus) { s.Phase = corev1.PodPending }, false},
		{"restarted", func(s *corev1.PodStatus) { s.ContainerStatuses[0].RestartCount = 1 }, false},
		{"container waiting", func(s *corev1.PodStatus) {
			s.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := base.DeepCopy()
			tc.change(other)
			if got := sameStatus(&base, other); got != tc.same {
				t.Errorf("sameStatus = %v, want %v", got, tc.same)
			}
		})
	}
}

// An edited manifest replaces a static pod: the new pod gets no sandbox
// while the worker of the old one (same name, removed) still tears it
// down, and starts once that worker is done.
func TestReplacedStaticPodWaitsForItsPredecessor(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	static := func(uid string) *corev1.Pod {
		p := testPod("etcd-node-1")
		p.UID = types.UID(uid)
		p.Annotations = map[string]string{annotationConfigSource: "file"}
		return p
	}
	old, cur := static("old"), static("new")
	oldWorker := f.syncedWorker(t, old)
	sandboxesOf := func(uid types.UID) int {
		f.runtime.Lock()
		defer f.runtime.Unlock()
		n := 0
		for _, s := range f.runtime.Sandboxes {
			if s.Metadata.Uid == string(uid) {
				n++
			}
		}
		return n
	}
	oldWorker.remove()
	w := newPodWorker(cur.UID)
	w.update(cur)
	if requeue := f.sync(t, w, cur); requeue != predecessorPoll || sandboxesOf(cur.UID) != 0 {
		t.Fatalf("while the old pod stops: requeue %s, %d sandboxes of the new pod; want %s and none", requeue, sandboxesOf(cur.UID), predecessorPoll)
	}
	if _, done, err := f.k.syncPod(ctx, oldWorker, old, true); err != nil || !done {
		t.Fatalf("tear-down of the old pod: done %v, %v", done, err)
	}
	delete(f.k.workers, old.UID)
	f.sync(t, w, cur)
	if sandboxesOf(cur.UID) != 1 || len(f.containers("app")) != 1 {
		t.Errorf("after the old pod stopped: %d sandboxes of the new pod, %d app containers; want 1 and 1", sandboxesOf(cur.UID), len(f.containers("app")))
	}
}
