package kubelet_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestInPlaceResize: a resize through pods/resize changes the running
// containers' cgroups (cgroup v1 files, as containerd 1.6 writes them
// here): in place for a container without a restart policy, by a restart
// for one whose memory policy is RestartContainer; the status reports the
// new resources and no resize condition is left.
func TestInPlaceResize(t *testing.T) {
	resources := func(cpuReq, cpuLim, memReq, memLim string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resourceQ(cpuReq), corev1.ResourceMemory: resourceQ(memReq)},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resourceQ(cpuLim), corev1.ResourceMemory: resourceQ(memLim)},
		}
	}
	container := func(name string, policy corev1.ResourceResizeRestartPolicy) corev1.Container {
		return corev1.Container{
			Name: name, Image: suite.busybox, Command: []string{"sh", "-c", "sleep 3600"},
			Resources: resources("100m", "200m", "32Mi", "64Mi"),
			ResizePolicy: []corev1.ContainerResizePolicy{
				{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.NotRequired},
				{ResourceName: corev1.ResourceMemory, RestartPolicy: policy},
			},
		}
	}
	pod := boundPod("resize", container("inplace", corev1.NotRequired), container("restarted", corev1.RestartContainer))
	pod.Spec.TerminationGracePeriodSeconds = new(int64)
	createPod(t, pod)
	waitPod(t, "resize", 60*time.Second, "Running and Ready", isReady)
	for _, name := range []string{"inplace", "restarted"} {
		expectCgroups(t, name, map[string]string{"cpu/cpu.shares": "102", "cpu/cpu.cfs_quota_us": "20000", "memory/memory.limit_in_bytes": "67108864"})
	}

	want := resources("150m", "300m", "48Mi", "96Mi")
	patch := `{"spec":{"containers":[` +
		`{"name":"inplace","resources":{"requests":{"cpu":"150m","memory":"48Mi"},"limits":{"cpu":"300m","memory":"96Mi"}}},` +
		`{"name":"restarted","resources":{"requests":{"cpu":"150m","memory":"48Mi"},"limits":{"cpu":"300m","memory":"96Mi"}}}]}}`
	resized, err := suite.client.CoreV1().Pods("default").Patch(context.Background(), "resize", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "resize")
	if err != nil {
		t.Fatalf("resize: %v", err)
	}
	p := waitPod(t, "resize", 60*time.Second, "resized", func(p *corev1.Pod) bool {
		if p.Status.ObservedGeneration < resized.Generation || !isReady(p) {
			return false
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodResizePending || c.Type == corev1.PodResizeInProgress {
				return false
			}
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Resources == nil || !apiequality.Semantic.DeepEqual(*cs.Resources, want) || !apiequality.Semantic.DeepEqual(cs.AllocatedResources, want.Requests) {
				return false
			}
		}
		return true
	})
	restarts := map[string]int32{}
	for _, cs := range p.Status.ContainerStatuses {
		restarts[cs.Name] = cs.RestartCount
	}
	if restarts["inplace"] != 0 || restarts["restarted"] != 1 {
		t.Errorf("restart counts %v, want inplace 0 and restarted 1", restarts)
	}
	for _, name := range []string{"inplace", "restarted"} {
		expectCgroups(t, name, map[string]string{"cpu/cpu.shares": "153", "cpu/cpu.cfs_quota_us": "30000", "memory/memory.limit_in_bytes": "100663296"})
	}
}

// expectCgroups reads the container's own cgroup v1 files, as upstream's
// resize specs do, until they hold the values wanted.
func expectCgroups(t *testing.T, container string, want map[string]string) {
	t.Helper()
	for file, value := range want {
		var got string
		err := waitFor(context.Background(), 10*time.Second, func() (bool, error) {
			r := suite.srv.Kubectl(t, "exec", "resize", "-c", container, "--", "head", "-n", "1", "/sys/fs/cgroup/"+file)
			got = strings.TrimSpace(r.Stdout)
			return r.ExitCode == 0 && got == value, nil
		})
		if err != nil {
			t.Errorf("container %s: %s = %q, want %q", container, file, got, value)
		}
	}
}
