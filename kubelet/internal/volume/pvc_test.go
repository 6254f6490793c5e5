package volume

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
)

func boundClaim(name, pv string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: "claim-" + "uid"},
		Spec:       corev1.PersistentVolumeClaimSpec{VolumeName: pv},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
	}
}

func TestPersistentVolumeClaims(t *testing.T) {
	hostDir := filepath.Join(t.TempDir(), "created")
	localDir := t.TempDir()
	claimRef := func(name string) *corev1.ObjectReference {
		return &corev1.ObjectReference{Namespace: "ns", Name: name, UID: "claim-uid"}
	}
	client := fake.NewClientset(
		boundClaim("host", "pv-host"), boundClaim("local", "pv-local"), boundClaim("nfs", "pv-nfs"), boundClaim("stolen", "pv-other"),
		&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "pending", Namespace: "ns"}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}},
		&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-host"}, Spec: corev1.PersistentVolumeSpec{ClaimRef: claimRef("host"),
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: hostDir, Type: ptr.To(corev1.HostPathDirectoryOrCreate)}}}},
		&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-local"}, Spec: corev1.PersistentVolumeSpec{ClaimRef: claimRef("local"),
			PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: localDir}}}},
		&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-nfs"}, Spec: corev1.PersistentVolumeSpec{ClaimRef: claimRef("nfs"),
			PersistentVolumeSource: corev1.PersistentVolumeSource{NFS: &corev1.NFSVolumeSource{Server: "x", Path: "/"}}}},
		&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-other"}, Spec: corev1.PersistentVolumeSpec{ClaimRef: claimRef("someone-else"),
			PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: localDir}}}},
	)
	m := New(t.TempDir(), client, fields{})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-1"}}
	tests := []struct {
		claim   string
		want    string
		wantErr string
	}{
		{"host", hostDir, ""},
		{"local", localDir, ""},
		{"nfs", "", "only hostPath and local"},
		{"pending", "", "not bound"},
		{"stolen", "", "not bound to claim"},
		{"absent", "", "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.claim, func(t *testing.T) {
			got, err := m.persistentVolume(context.Background(), pod, &corev1.PersistentVolumeClaimVolumeSource{ClaimName: tt.claim})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("= %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if fi, err := os.Stat(hostDir); err != nil || !fi.IsDir() {
		t.Errorf("DirectoryOrCreate hostPath PV not created: %v", err)
	}
}

func testCert(t *testing.T, cn string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: cn}, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
}

func TestClusterTrustBundleProjection(t *testing.T) {
	a, b, c := testCert(t, "a"), testCert(t, "b"), testCert(t, "c")
	client := fake.NewClientset(
		&certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "named"}, Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: a}},
		&certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "example.com:signer:1", Labels: map[string]string{"live": "yes"}}, Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/signer", TrustBundle: b + a}},
		&certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "example.com:signer:2", Labels: map[string]string{"live": "yes"}}, Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/signer", TrustBundle: a}},
		&certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: "example.com:signer:3", Labels: map[string]string{"live": "no"}}, Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/signer", TrustBundle: c}},
	)
	m := New(t.TempDir(), client, fields{})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-ctb"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{{
		Name: "trust", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr.To("named"), Path: "named.pem"}},
			{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{SignerName: ptr.To("example.com/signer"), LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"live": "yes"}}, Path: "signer.pem"}},
			{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr.To("absent"), Optional: ptr.To(true), Path: "absent.pem"}},
		}}},
	}}}}
	paths, err := m.Setup(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(paths["trust"], "named.pem")); got != a {
		t.Errorf("named bundle = %q", got)
	}
	certs, err := certutil.ParseCertsPEM([]byte(read(t, filepath.Join(paths["trust"], "signer.pem"))))
	if err != nil || len(certs) != 2 {
		t.Fatalf("signer bundle: %d certificates, %v; want a and b once each", len(certs), err)
	}
	for _, cert := range certs {
		if cert.Subject.CommonName == "c" {
			t.Errorf("bundle outside the selector included")
		}
	}
	if _, err := os.Stat(filepath.Join(paths["trust"], "absent.pem")); !os.IsNotExist(err) {
		t.Errorf("optional absent bundle wrote a file")
	}
	pod.Spec.Volumes[0].Projected.Sources = append(pod.Spec.Volumes[0].Projected.Sources, corev1.VolumeProjection{
		ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{SignerName: ptr.To("example.com/none"), LabelSelector: &metav1.LabelSelector{}, Path: "none.pem"}})
	if _, err := m.Setup(context.Background(), pod); err == nil {
		t.Errorf("required bundle with no match accepted")
	}
}
