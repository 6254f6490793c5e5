package volume

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func TestFsUser(t *testing.T) {
	runAs := func(u int64) *corev1.SecurityContext { return &corev1.SecurityContext{RunAsUser: ptr.To(u)} }
	tests := []struct {
		name string
		pod  corev1.PodSpec
		want *int64
	}{
		{name: "no user anywhere", pod: corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}}},
		{name: "pod's user", pod: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}, Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}}, want: ptr.To[int64](1000)},
		{name: "containers agree", pod: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "i", SecurityContext: runAs(7)}}, Containers: []corev1.Container{{Name: "a", SecurityContext: runAs(7)}}}, want: ptr.To[int64](7)},
		{name: "containers differ", pod: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", SecurityContext: runAs(7)}, {Name: "b", SecurityContext: runAs(8)}}}},
		{name: "one container has none", pod: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", SecurityContext: runAs(7)}, {Name: "b"}}}},
		{name: "container overrides the pod", pod: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)}, Containers: []corev1.Container{{Name: "a", SecurityContext: runAs(0)}}}, want: ptr.To[int64](0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := fsUser(&corev1.Pod{Spec: tc.pod})
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("fsUser = %v, want %v", ptr.Deref(got, -1), ptr.Deref(tc.want, -1))
			}
		})
	}
}

func TestSetupWithFSGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("changing owners needs root")
	}
	ctx := context.Background()
	client := fake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Data: map[string][]byte{"data-1": []byte("value-1")}},
		&certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "ctb"}, Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: testCert(t, "ca")}},
	)
	m := New(t.TempDir(), client, fields{})
	secretOnly := func(mode int32) corev1.VolumeSource {
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s", DefaultMode: ptr.To(mode)}}
	}
	projected := corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](0o644), Sources: []corev1.VolumeProjection{
		{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}}},
		{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr.To("ctb"), Path: "ca.pem"}},
	}}}
	type file struct {
		path     string
		mode     fs.FileMode
		uid, gid uint32
	}
	tests := []struct {
		name    string
		sc      *corev1.PodSecurityContext
		volume  corev1.VolumeSource
		want    []file
		dirMode fs.FileMode
	}{
		{
			name: "secret, defaultMode 0440, fsGroup and a non-root user", sc: &corev1.PodSecurityContext{FSGroup: ptr.To[int64](1001), RunAsUser: ptr.To[int64](1000)},
			volume: secretOnly(0o440), want: []file{{"data-1", 0o440, 0, 1001}}, dirMode: 0o755 | dirMask,
		},
		{
			name: "secret, defaultMode 0400 gains the group's read", sc: &corev1.PodSecurityContext{FSGroup: ptr.To[int64](1001)},
			volume: secretOnly(0o400), want: []file{{"data-1", 0o440, 0, 1001}}, dirMode: 0o755 | dirMask,
		},
		{
			name: "no fsGroup leaves owner and mode", sc: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)},
			volume: secretOnly(0o400), want: []file{{"data-1", 0o400, 0, 0}}, dirMode: 0o755,
		},
		{
			name: "projected credentials go to the pod's user", sc: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)},
			volume: projected, want: []file{{"data-1", 0o644, 0, 0}, {"ca.pem", 0o600, 1000, 0}}, dirMode: 0o755,
		},
		{
			name: "projected credentials with fsGroup", sc: &corev1.PodSecurityContext{FSGroup: ptr.To[int64](2000)},
			volume: projected, want: []file{{"data-1", 0o644, 0, 2000}, {"ca.pem", 0o640, 0, 2000}}, dirMode: 0o755 | dirMask,
		},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: types.UID(fmt.Sprintf("uid-%d", i))},
				Spec: corev1.PodSpec{
					SecurityContext: tc.sc,
					Containers:      []corev1.Container{{Name: "c"}},
					Volumes:         []corev1.Volume{{Name: "v", VolumeSource: tc.volume}},
				},
			}
			paths, err := m.Setup(ctx, pod, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = m.Teardown(context.Background(), pod.UID) })
			for _, f := range tc.want {
				// The file itself, through the ..data link as a container sees it.
				fi, err := os.Stat(filepath.Join(paths["v"], f.path))
				if err != nil {
					t.Fatal(err)
				}
				st := fi.Sys().(*syscall.Stat_t)
				if fi.Mode().Perm() != f.mode || st.Uid != f.uid || st.Gid != f.gid {
					t.Errorf("%s: mode %v owner %d:%d, want %v %d:%d", f.path, fi.Mode().Perm(), st.Uid, st.Gid, f.mode, f.uid, f.gid)
				}
			}
			di, err := os.Stat(filepath.Join(paths["v"], "..data"))
			if err != nil {
				t.Fatal(err)
			}
			if got := di.Mode() & (fs.ModePerm | fs.ModeSetgid); got != tc.dirMode {
				t.Errorf("data directory mode %v, want %v", got, tc.dirMode)
			}
		})
	}
}

func fileUID(fi fs.FileInfo) uint32 { return fi.Sys().(*syscall.Stat_t).Uid }
