package volume

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// certs is a PodCertificates with fixed credentials, or an error.
type certs struct {
	err       error
	asked     []int
	forgotten []types.UID
}

func (c *certs) Credentials(_ context.Context, _ *corev1.Pod, volume string, index int, _ *corev1.PodCertificateProjection) ([]byte, []byte, error) {
	c.asked = append(c.asked, index)
	if c.err != nil {
		return nil, nil, c.err
	}
	return []byte("KEY\n"), []byte("CHAIN\n"), nil
}

func (c *certs) Forget(uid types.UID) { c.forgotten = append(c.forgotten, uid) }

func TestPodCertificateFiles(t *testing.T) {
	tests := []struct {
		name    string
		source  corev1.PodCertificateProjection
		err     error
		want    map[string]string
		wantErr bool
	}{
		{name: "credential bundle: key then chain", source: corev1.PodCertificateProjection{CredentialBundlePath: "creds.pem"}, want: map[string]string{"creds.pem": "KEY\nCHAIN\n"}},
		{name: "key and chain apart", source: corev1.PodCertificateProjection{KeyPath: "tls.key", CertificateChainPath: "tls.crt"}, want: map[string]string{"tls.key": "KEY\n", "tls.crt": "CHAIN\n"}},
		{name: "all three", source: corev1.PodCertificateProjection{CredentialBundlePath: "b.pem", KeyPath: "k.pem", CertificateChainPath: "c.pem"}, want: map[string]string{"b.pem": "KEY\nCHAIN\n", "k.pem": "KEY\n", "c.pem": "CHAIN\n"}},
		{name: "not issued yet fails the volume", source: corev1.PodCertificateProjection{CredentialBundlePath: "creds.pem"}, err: errors.New("credential bundle is not issued yet"), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(t.TempDir(), fake.NewClientset(), fields{})
			c := &certs{err: tc.err}
			m.SetPodCertificates(c)
			src := tc.source
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-cert"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{{
				Name: "tls", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](0o644), Sources: []corev1.VolumeProjection{
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}},
					{PodCertificate: &src},
				}}},
			}}}}
			paths, err := m.Setup(context.Background(), pod, nil)
			if tc.wantErr {
				if err == nil {
					t.Fatal("volume set up without credentials")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(c.asked) != 1 || c.asked[0] != 1 {
				t.Errorf("asked for sources %v, want [1], the source's index", c.asked)
			}
			for name, want := range tc.want {
				if got := read(t, filepath.Join(paths["tls"], name)); got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
			if err := m.Teardown(context.Background(), pod.UID); err != nil {
				t.Fatal(err)
			}
			if len(c.forgotten) != 1 || c.forgotten[0] != pod.UID {
				t.Errorf("forgotten %v, want the pod's UID once its volumes are gone", c.forgotten)
			}
		})
	}
	t.Run("credentials belong to the pod's user", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("changing owners needs root")
		}
		m := New(t.TempDir(), fake.NewClientset(), fields{})
		m.SetPodCertificates(&certs{})
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-user"}, Spec: corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)},
			Containers:      []corev1.Container{{Name: "c"}},
			Volumes: []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](0o644), Sources: []corev1.VolumeProjection{
				{PodCertificate: &corev1.PodCertificateProjection{KeyPath: "tls.key"}},
			}}}}},
		}}
		paths, err := m.Setup(context.Background(), pod, nil)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(paths["tls"], "tls.key"))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 || fileUID(fi) != 1000 {
			t.Errorf("key mode %v owner %d, want 0600 and the pod's user", fi.Mode().Perm(), fileUID(fi))
		}
	})
}
