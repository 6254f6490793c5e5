package volume

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteAtomic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vol")
	if err := WriteAtomic(dir, map[string]File{"a": {Data: []byte("1"), Mode: 0o644}, "sub/b": {Data: []byte("2"), Mode: 0o600}}, nil); err != nil {
		t.Fatal(err)
	}
	first, _ := os.Readlink(filepath.Join(dir, "..data"))
	if read(t, filepath.Join(dir, "a")) != "1" || read(t, filepath.Join(dir, "sub", "b")) != "2" {
		t.Fatal("content wrong after the first write")
	}
	if err := WriteAtomic(dir, map[string]File{"a": {Data: []byte("1"), Mode: 0o644}, "sub/b": {Data: []byte("2"), Mode: 0o600}}, nil); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.Readlink(filepath.Join(dir, "..data")); again != first {
		t.Errorf("unchanged content was rewritten: %s -> %s", first, again)
	}
	if err := WriteAtomic(dir, map[string]File{"a": {Data: []byte("updated"), Mode: 0o644}}, nil); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(dir, "a")) != "updated" {
		t.Error("update not visible through the symlink")
	}
	if _, err := os.Lstat(filepath.Join(dir, "sub")); !os.IsNotExist(err) {
		t.Errorf("removed key still present: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, first)); !os.IsNotExist(err) {
		t.Errorf("old data directory kept: %v", err)
	}
	if err := WriteAtomic(dir, map[string]File{"../escape": {Data: []byte("x")}}, nil); err == nil {
		t.Error("path escaping the volume accepted")
	}
}

type fields struct{}

func (fields) PodField(pod *corev1.Pod, path string) (string, error) {
	return pod.Name + ":" + path, nil
}
func (fields) ContainerResource(*corev1.Pod, *corev1.ResourceFieldSelector) (string, error) {
	return "1", nil
}

func TestSetup(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns"}, Data: map[string]string{"k": "v", "other": "o"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Data: map[string][]byte{"pw": []byte("hunter2")}},
	)
	root := t.TempDir()
	m := New(root, client, fields{})
	hostDir := t.TempDir()
	mode := int32(0o400)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-1"},
		Spec: corev1.PodSpec{Volumes: []corev1.Volume{
			{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir}}},
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Items: []corev1.KeyToPath{{Key: "k", Path: "renamed"}}}}},
			{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", DefaultMode: &mode}}},
			{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}}},
			{Name: "optional", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Optional: boolPtr(true)}}},
		}},
	}
	paths, err := m.Setup(ctx, pod, nil)
	if err != nil {
		t.Fatal(err)
	}
	if paths["host"] != hostDir {
		t.Errorf("hostPath %s", paths["host"])
	}
	if got := read(t, filepath.Join(paths["config"], "renamed")); got != "v" {
		t.Errorf("configmap item %q", got)
	}
	if _, err := os.Stat(filepath.Join(paths["config"], "other")); !os.IsNotExist(err) {
		t.Error("configmap key outside items projected")
	}
	fi, err := os.Stat(filepath.Join(paths["secret"], "pw"))
	if err != nil || fi.Mode().Perm() != 0o400 {
		t.Errorf("secret file mode %v %v", fi, err)
	}
	if got := read(t, filepath.Join(paths["info"], "name")); got != "p:metadata.name" {
		t.Errorf("downward API %q", got)
	}
	if fi, err := os.Stat(paths["scratch"]); err != nil || !fi.IsDir() {
		t.Errorf("emptyDir %v", err)
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "missing", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "absent"}}})
	if _, err := m.Setup(ctx, pod, nil); err == nil {
		t.Error("missing required secret accepted")
	}
	if err := m.Teardown(context.Background(), pod.UID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m.PodDir(pod.UID)); !os.IsNotExist(err) {
		t.Error("pod directory left after teardown")
	}
}

func boolPtr(v bool) *bool { return &v }
