package kubelet_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The control plane runs as static pods, so they must start before there
// is an apiserver to ask.
func TestStaticPodStartsWithTheAPIServerDown(t *testing.T) {
	ctx := context.Background()
	if err := suite.srv.Stop(); err != nil {
		// Stop kills what ignores SIGTERM; the server is down either way.
		t.Logf("stop apiserver: %v", err)
	}
	restarted := false
	restart := func() {
		if !restarted {
			restarted = true
			if err := suite.srv.Restart(ctx); err != nil {
				t.Fatalf("restart apiserver: %v", err)
			}
		}
	}
	t.Cleanup(restart)
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: offline
  namespace: default
spec:
  containers:
  - name: app
    image: %s
    command: ["sleep", "3600"]
`, suite.busybox)
	path := filepath.Join(suite.dir, "manifests", "offline.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(path) })
	name := "offline-" + suite.nodeName
	rs, err := suite.containerd.RuntimeService(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close(ctx)
	err = waitFor(ctx, 60*time.Second, func() (bool, error) {
		cs, err := rs.ListContainers(ctx, &runtimeapi.ContainerFilter{
			State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
			LabelSelector: map[string]string{"io.kubernetes.pod.name": name},
		})
		return err == nil && len(cs) == 1, nil
	})
	if err != nil {
		t.Fatalf("static pod never ran with the apiserver down: %v\n%s", err, suite.kubeletLog.Tail(30))
	}
	restart()
	waitPod(t, name, 90*time.Second, "mirrored and Ready once the apiserver is back", isReady)
	os.Remove(path)
	err = waitFor(ctx, 60*time.Second, func() (bool, error) {
		_, err := suite.client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("mirror pod not removed: %v", err)
	}
}
