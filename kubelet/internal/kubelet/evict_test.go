package kubelet

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestEvictStopsPodAsEvicted(t *testing.T) {
	pod := testPod("hog")
	f := newFixture(t, pod)
	w := newPodWorker(pod.UID)
	f.sync(t, w, pod)
	if cs := f.containers("app"); len(cs) != 1 || cs[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("container not running: %v", cs)
	}
	if f.k.Evict("nobody", "x") {
		t.Errorf("evicted a pod the kubelet does not run")
	}
	f.k.mu.Lock()
	f.k.workers[pod.UID] = w
	f.k.mu.Unlock()
	const msg = "The node was low on resource: memory."
	if !f.k.Evict(pod.UID, msg) {
		t.Fatal("Evict = false")
	}
	f.sync(t, w, pod)
	for _, c := range f.containers("app") {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			t.Errorf("container still running after eviction")
		}
	}
	st := f.apiPod(t, "hog").Status
	if st.Phase != corev1.PodFailed || st.Reason != "Evicted" || st.Message != msg {
		t.Errorf("status phase %s reason %q message %q", st.Phase, st.Reason, st.Message)
	}
	found := false
	for _, c := range st.Conditions {
		found = found || (c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Reason == "TerminationByKubelet")
	}
	if !found {
		t.Errorf("no DisruptionTarget condition: %v", st.Conditions)
	}
	// A later sync leaves the pod stopped.
	f.sync(t, w, f.apiPod(t, "hog"))
	for _, c := range f.containers("app") {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			t.Errorf("evicted pod restarted")
		}
	}
}
