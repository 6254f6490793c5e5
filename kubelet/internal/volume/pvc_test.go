package volume

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testpki"
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

// testCert returns the PEM certificate of a new CA named cn.
func testCert(t *testing.T, cn string) string {
	t.Helper()
	return string(testpki.NewCA(cn).CertPEM)
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
	paths, err := m.Setup(context.Background(), pod, nil)
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
	// Upstream writes an optional source that finds nothing as an empty
	// file (the conformance specs read it).
	if got := read(t, filepath.Join(paths["trust"], "absent.pem")); got != "" {
		t.Errorf("optional absent bundle wrote %q, want an empty file", got)
	}
	pod.Spec.Volumes[0].Projected.Sources = append(pod.Spec.Volumes[0].Projected.Sources, corev1.VolumeProjection{
		ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{SignerName: ptr.To("example.com/none"), LabelSelector: &metav1.LabelSelector{}, Path: "none.pem"}})
	if _, err := m.Setup(context.Background(), pod, nil); err == nil {
		t.Errorf("required bundle with no match accepted")
	}
}

// bundleCache is a TrustBundles holding some bundles.
type bundleCache struct {
	synced  bool
	bundles []*certificatesv1.ClusterTrustBundle
}

func (c *bundleCache) Get(name string) (*certificatesv1.ClusterTrustBundle, error) {
	for _, b := range c.bundles {
		if b.Name == name {
			return b, nil
		}
	}
	return nil, apierrors.NewNotFound(certificatesv1.Resource("clustertrustbundles"), name)
}

func (c *bundleCache) List(sel labels.Selector) ([]*certificatesv1.ClusterTrustBundle, error) {
	var out []*certificatesv1.ClusterTrustBundle
	for _, b := range c.bundles {
		if sel.Matches(labels.Set(b.Labels)) {
			out = append(out, b)
		}
	}
	return out, nil
}

func (c *bundleCache) HasSynced() bool { return c.synced }

func TestClusterTrustBundleSources(t *testing.T) {
	a, b := testCert(t, "a"), testCert(t, "b")
	ctb := func(name, signer, pem string, lbls map[string]string) *certificatesv1.ClusterTrustBundle {
		return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}, Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: pem}}
	}
	inAPI := ctb("example.com:s:api", "example.com/s", a, map[string]string{"k": "v"})
	inCache := ctb("example.com:s:cached", "example.com/s", b, map[string]string{"k": "v"})
	byName := func(name string, optional bool) *corev1.ClusterTrustBundleProjection {
		return &corev1.ClusterTrustBundleProjection{Name: ptr.To(name), Optional: ptr.To(optional)}
	}
	bySigner := func(sel *metav1.LabelSelector, optional bool) *corev1.ClusterTrustBundleProjection {
		return &corev1.ClusterTrustBundleProjection{SignerName: ptr.To("example.com/s"), LabelSelector: sel, Optional: ptr.To(optional)}
	}
	tests := []struct {
		name    string
		cache   *bundleCache
		source  *corev1.ClusterTrustBundleProjection
		want    string
		wantErr string
	}{
		{name: "by name from the cache", cache: &bundleCache{synced: true, bundles: []*certificatesv1.ClusterTrustBundle{inCache}}, source: byName(inCache.Name, false), want: b},
		{name: "by name missed by the cache comes from the apiserver", cache: &bundleCache{synced: true}, source: byName(inAPI.Name, false), want: a},
		{name: "unsynced cache is not read", cache: &bundleCache{bundles: []*certificatesv1.ClusterTrustBundle{inCache}}, source: byName(inCache.Name, true), want: ""},
		{name: "missing required by name", source: byName("nope", false), wantErr: "not found"},
		{name: "missing optional by name is empty", source: byName("nope", true), want: ""},
		{name: "by signer from the cache", cache: &bundleCache{synced: true, bundles: []*certificatesv1.ClusterTrustBundle{inCache}}, source: bySigner(&metav1.LabelSelector{}, false), want: b},
		{name: "by signer missed by the cache", cache: &bundleCache{synced: true}, source: bySigner(&metav1.LabelSelector{}, false), want: a},
		{name: "nil selector matches nothing", source: bySigner(nil, false), wantErr: "matched zero ClusterTrustBundles"},
		{name: "nil selector, optional", source: bySigner(nil, true), want: ""},
		{name: "selector matching nothing, optional", source: bySigner(&metav1.LabelSelector{MatchLabels: map[string]string{"k": "other"}}, true), want: ""},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(t.TempDir(), fake.NewClientset(inAPI), fields{})
			if tc.cache != nil {
				m.SetTrustBundles(tc.cache)
			}
			src := *tc.source
			src.Path = "ca.pem"
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: types.UID(fmt.Sprint("uid-", i))}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{{
				Name: "trust", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ClusterTrustBundle: &src}}}},
			}}}}
			paths, err := m.Setup(context.Background(), pod, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := read(t, filepath.Join(paths["trust"], "ca.pem")); got != tc.want {
				t.Errorf("ca.pem = %q, want %q", got, tc.want)
			}
		})
	}
}
