package volume

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"trireme.dev/kubelet/internal/imagevolume"
)

// fakeViews keeps views by key and "mounts" by making a file in the
// directory, as a mount would show the image's files.
type fakeViews struct {
	views map[string]imagevolume.View
}

func (f *fakeViews) Mount(_ context.Context, v imagevolume.View) error {
	f.views[v.Key] = v
	if err := os.MkdirAll(v.Dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(v.Dir, "from-image"), []byte(v.Image), 0o644)
}

func (f *fakeViews) Unmount(_ context.Context, key, dir string) error {
	delete(f.views, key)
	return os.RemoveAll(dir)
}

func (f *fakeViews) List(context.Context) ([]imagevolume.View, error) {
	var out []imagevolume.View
	for _, v := range f.views {
		out = append(out, v)
	}
	return out, nil
}

func imagePod(uid string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: types.UID(uid)},
		Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "img", VolumeSource: corev1.VolumeSource{
			Image: &corev1.ImageVolumeSource{Reference: "busybox:1", PullPolicy: corev1.PullIfNotPresent},
		}}}},
	}
}

// TestImageVolumeSetupTeardown: Setup mounts the pulled image's view
// under the pod's directory, Teardown removes it before the directory,
// and the orphan pass removes only views below this kubelet's root of
// pods it no longer runs.
func TestImageVolumeSetupTeardown(t *testing.T) {
	root := t.TempDir()
	views := &fakeViews{views: map[string]imagevolume.View{}}
	m := New(root, nil, nil)
	ctx := context.Background()
	pod := imagePod("uid-1")

	if _, err := m.Setup(ctx, pod, nil); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("Setup without an image mounter = %v, want not supported", err)
	}
	m.SetImageViews(views)
	if _, err := m.Setup(ctx, pod, nil); err == nil || !strings.Contains(err.Error(), "not pulled") {
		t.Errorf("Setup without the image's ID = %v, want not pulled", err)
	}
	paths, err := m.Setup(ctx, pod, map[string]string{"img": "sha256:abc"})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "pods", "uid-1", "volumes", "kubernetes.io~image", "img")
	if paths["img"] != dir || read(t, filepath.Join(dir, "from-image")) != "sha256:abc" {
		t.Fatalf("paths = %v", paths)
	}
	want := imagevolume.View{Key: imagevolume.Key("uid-1", "img"), Image: "sha256:abc", Dir: dir, PodUID: "uid-1"}
	if diff := cmp.Diff(map[string]imagevolume.View{want.Key: want}, views.views); diff != "" {
		t.Errorf("views (-want +got):\n%s", diff)
	}

	// Teardown needs no pod spec: the directory names the volume.
	if err := m.Teardown(ctx, pod.UID); err != nil {
		t.Fatal(err)
	}
	if len(views.views) != 0 {
		t.Errorf("views left after Teardown: %v", views.views)
	}
	if _, err := os.Stat(m.PodDir(pod.UID)); !os.IsNotExist(err) {
		t.Errorf("pod directory left: %v", err)
	}

	// Orphans: uid-2 runs, uid-3 is gone, uid-4 is another kubelet's.
	for _, uid := range []string{"uid-2", "uid-3"} {
		if _, err := m.Setup(ctx, imagePod(uid), map[string]string{"img": "sha256:abc"}); err != nil {
			t.Fatal(err)
		}
	}
	other := imagevolume.View{Key: imagevolume.Key("uid-4", "img"), Image: "sha256:abc", Dir: "/elsewhere/pods/uid-4/volumes/kubernetes.io~image/img", PodUID: "uid-4"}
	views.views[other.Key] = other
	active := func(uid types.UID) bool { return uid == "uid-2" }
	if err := m.CleanupOrphanedImageVolumes(ctx, active); err != nil {
		t.Fatal(err)
	}
	var left []string
	for k := range views.views {
		left = append(left, k)
	}
	if diff := cmp.Diff([]string{imagevolume.Key("uid-2", "img"), other.Key}, left, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("views left (-want +got):\n%s", diff)
	}
}
