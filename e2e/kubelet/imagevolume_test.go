package kubelet_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testcluster"
)

// imageVolumeDir is where the kubelet mounts a pod's image volume.
func imageVolumeDir(pod *corev1.Pod, volume string) string {
	return filepath.Join(suite.dir, "root", "pods", string(pod.UID), "volumes", "kubernetes.io~image", volume)
}

// isMounted says whether path is a mount point of this mount namespace.
func isMounted(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == path {
			return true
		}
	}
	return false
}

// snapshotKeys lists the suite containerd's overlayfs snapshots.
func snapshotKeys(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("ctr", "--address", strings.TrimPrefix(suite.containerd.Endpoint(), "unix://"),
		"-n", "k8s.io", "snapshots", "--snapshotter", "overlayfs", "ls").CombinedOutput()
	if err != nil {
		t.Fatalf("ctr snapshots ls: %v: %s", err, out)
	}
	return string(out)
}

// TestImageVolume: an image is mounted read-only as a volume (issue 23):
// the container reads the image's files, cannot write there, and once the
// pod is deleted the mount and containerd's view snapshot are gone.
func TestImageVolume(t *testing.T) {
	pod := boundPod("image-volume", corev1.Container{
		Name: "app", Image: suite.busybox, ImagePullPolicy: corev1.PullNever,
		Command:      []string{"sleep", "3600"},
		VolumeMounts: []corev1.VolumeMount{{Name: "image", MountPath: "/volume"}},
	})
	pod.Spec.Volumes = []corev1.Volume{{Name: "image", VolumeSource: corev1.VolumeSource{
		Image: &corev1.ImageVolumeSource{Reference: suite.busybox, PullPolicy: corev1.PullNever},
	}}}
	created := createPod(t, pod)
	waitPod(t, pod.Name, 90*time.Second, "Ready", isReady)

	want, err := os.ReadFile(filepath.Join(testcluster.RepoRoot(), "images", "rootfs", "busybox", "etc", "passwd"))
	if err != nil {
		t.Fatal(err)
	}
	got := suite.srv.Kubectl(t, "exec", pod.Name, "--", "cat", "/volume/etc/passwd")
	if got.ExitCode != 0 || got.Stdout != string(want) {
		t.Fatalf("the image's /etc/passwd through the volume: %s\nwant %q", got, want)
	}
	if r := suite.srv.Kubectl(t, "exec", pod.Name, "--", "ls", "/volume/bin/busybox"); r.ExitCode != 0 {
		t.Errorf("the image's /bin/busybox is not in the volume: %s", r)
	}
	w := suite.srv.Kubectl(t, "exec", pod.Name, "--", "touch", "/volume/written")
	if w.ExitCode == 0 || !strings.Contains(w.Stderr, "Read-only file system") {
		t.Errorf("writing into the image volume: %s; want it refused as read-only", w)
	}

	dir := imageVolumeDir(created, "image")
	if !isMounted(t, dir) {
		t.Fatalf("%s is not a mount point on the host", dir)
	}
	key := "trireme.dev/image-volume/" + string(created.UID) + "/image"
	if !strings.Contains(snapshotKeys(t), key) {
		t.Fatalf("no view snapshot %s:\n%s", key, snapshotKeys(t))
	}

	ctx := context.Background()
	if err := suite.client.CoreV1().Pods("default").Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(ctx, 60*time.Second, func() (bool, error) {
		_, err := suite.client.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatalf("pod never went away: %v", err)
	}
	if err := waitFor(ctx, 30*time.Second, func() (bool, error) {
		return !isMounted(t, dir) && !strings.Contains(snapshotKeys(t), key), nil
	}); err != nil {
		t.Errorf("after the pod was deleted: mounted %v, snapshots:\n%s", isMounted(t, dir), snapshotKeys(t))
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the volume directory is still there: %v", err)
	}
}

// TestImageVolumeNotPresent: an image volume whose image is missing with
// pull policy Never holds the pod's containers, which wait with
// ErrImageNeverPull and a Warning event naming the image; the pod still
// deletes cleanly.
func TestImageVolumeNotPresent(t *testing.T) {
	const missing = "trireme.dev/no-such-image:1"
	pod := boundPod("image-volume-missing", corev1.Container{
		Name: "app", Image: suite.busybox, ImagePullPolicy: corev1.PullNever,
		Command:      []string{"sleep", "3600"},
		VolumeMounts: []corev1.VolumeMount{{Name: "image", MountPath: "/volume"}},
	})
	pod.Spec.Volumes = []corev1.Volume{{Name: "image", VolumeSource: corev1.VolumeSource{
		Image: &corev1.ImageVolumeSource{Reference: missing, PullPolicy: corev1.PullNever},
	}}}
	createPod(t, pod)
	p := waitPod(t, pod.Name, 60*time.Second, "waiting with ErrImageNeverPull", func(p *corev1.Pod) bool {
		for _, cs := range p.Status.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && w.Reason == "ErrImageNeverPull" {
				return true
			}
		}
		return false
	})
	if p.Status.Phase != corev1.PodPending {
		t.Errorf("phase = %s, want Pending", p.Status.Phase)
	}
	ctx := context.Background()
	if err := waitFor(ctx, 30*time.Second, func() (bool, error) {
		events, err := suite.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod.Name})
		if err != nil {
			return false, nil
		}
		for _, e := range events.Items {
			if e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, missing) {
				return true, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Errorf("no Warning event names %s: %v", missing, err)
	}
}
