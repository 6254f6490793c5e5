package kubelet

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A static pod's status goes to its mirror pod, by name. A changed
// manifest replaces the mirror: the new one is created empty, after the
// status was written to the old one, and gets it once MirrorAdded says it
// is there. Before any mirror exists, the status is written on a later
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
		t.Fatalf("the unchanged status was written again without MirrorAdded: %q", got)
	}
	f.k.MirrorAdded(pod.UID)
	f.sync(t, w, pod)
	if got := phase(); got != corev1.PodRunning {
		t.Errorf("new mirror's phase %q after MirrorAdded and a sync, want Running", got)
	}
}
