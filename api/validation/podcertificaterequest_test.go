package validation

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pcrKey makes a key, its stub request, and a certificate for it valid
// from notBefore for lifetime.
func pcrKey(t *testing.T, notBefore time.Time, lifetime time.Duration) (stub []byte, chain string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	stub, err = x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pod"}, NotBefore: notBefore, NotAfter: notBefore.Add(lifetime), DNSNames: []string{"web.demo.svc"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return stub, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestPodCertificateRequest(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	stub, chain := pcrKey(t, now, 2*time.Hour)
	_, otherChain := pcrKey(t, now, 2*time.Hour)
	pcr := &certificatesv1.PodCertificateRequest{ObjectMeta: meta("web-1"), Spec: certificatesv1.PodCertificateRequestSpec{
		SignerName: "example.com/mesh", PodName: "web", PodUID: "p-uid", ServiceAccountName: "default", ServiceAccountUID: "sa-uid",
		NodeName: "node-a", NodeUID: "n-uid", MaxExpirationSeconds: ptr[int32](86400), StubPKCS10Request: stub,
	}}
	create := []struct {
		name   string
		mutate func(r *certificatesv1.PodCertificateRequest)
		want   []want
	}{
		{"valid", func(*certificatesv1.PodCertificateRequest) {}, nil},
		{"uids required", func(r *certificatesv1.PodCertificateRequest) { r.Spec.PodUID, r.Spec.NodeUID = "", "" }, []want{invalid("spec.podUID"), invalid("spec.nodeUID")}},
		{"lifetime too short", func(r *certificatesv1.PodCertificateRequest) { r.Spec.MaxExpirationSeconds = ptr[int32](60) }, []want{invalid("spec.maxExpirationSeconds")}},
		{"kubernetes.io signers give a day at most", func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.SignerName, r.Spec.MaxExpirationSeconds = "kubernetes.io/kube-apiserver-client-pod", ptr[int32](2*86400)
		}, []want{invalid("spec.maxExpirationSeconds")}},
		{"bad signer name", func(r *certificatesv1.PodCertificateRequest) { r.Spec.SignerName = "mesh" }, []want{invalid("spec.signerName")}},
		{"no key", func(r *certificatesv1.PodCertificateRequest) { r.Spec.StubPKCS10Request = nil }, []want{required("spec.stubPKCS10Request")}},
		{"tampered request", func(r *certificatesv1.PodCertificateRequest) {
			r.Spec.StubPKCS10Request = append([]byte(nil), stub...)
			r.Spec.StubPKCS10Request[len(stub)-1] ^= 1
		}, []want{invalid("spec.stubPKCS10Request")}},
	}
	for _, tc := range create {
		t.Run(tc.name, func(t *testing.T) {
			r := pcr.DeepCopy()
			tc.mutate(r)
			expectErrs(t, ValidateCreate(r), tc.want...)
		})
	}

	old := pcr.DeepCopy()
	stored(&old.ObjectMeta)
	changed := old.DeepCopy()
	changed.Spec.PodName = "other"
	expectErrs(t, ValidateUpdate(changed, old), invalid("spec"))

	cond := func(typ string) []metav1.Condition {
		return []metav1.Condition{{Type: typ, Status: metav1.ConditionTrue, Reason: "Test", LastTransitionTime: metav1.NewTime(now)}}
	}
	issued := func(chain string, nb, na, refresh time.Time) certificatesv1.PodCertificateRequestStatus {
		return certificatesv1.PodCertificateRequestStatus{Conditions: cond(certificatesv1.PodCertificateRequestConditionTypeIssued), CertificateChain: chain,
			NotBefore: &metav1.Time{Time: nb}, NotAfter: &metav1.Time{Time: na}, BeginRefreshAt: &metav1.Time{Time: refresh}}
	}
	good := issued(chain, now, now.Add(2*time.Hour), now.Add(time.Hour))
	status := []struct {
		name string
		from certificatesv1.PodCertificateRequestStatus
		to   certificatesv1.PodCertificateRequestStatus
		want []want
	}{
		{"issued", certificatesv1.PodCertificateRequestStatus{}, good, nil},
		{"issued to another key", certificatesv1.PodCertificateRequestStatus{}, issued(otherChain, now, now.Add(2*time.Hour), now.Add(time.Hour)), []want{invalid("status.certificateChain")}},
		{"notAfter not the certificate's", certificatesv1.PodCertificateRequestStatus{}, issued(chain, now, now.Add(3*time.Hour), now.Add(time.Hour)), []want{invalid("status.notAfter")}},
		{"refresh too late", certificatesv1.PodCertificateRequestStatus{}, issued(chain, now, now.Add(2*time.Hour), now.Add(2*time.Hour)), []want{invalid("status.beginRefreshAt")}},
		{"denied with a certificate", certificatesv1.PodCertificateRequestStatus{}, certificatesv1.PodCertificateRequestStatus{
			Conditions: cond(certificatesv1.PodCertificateRequestConditionTypeDenied), CertificateChain: chain}, []want{invalid("status")}},
		{"denied", certificatesv1.PodCertificateRequestStatus{}, certificatesv1.PodCertificateRequestStatus{Conditions: cond(certificatesv1.PodCertificateRequestConditionTypeDenied)}, nil},
		{"unknown condition", certificatesv1.PodCertificateRequestStatus{}, certificatesv1.PodCertificateRequestStatus{Conditions: cond("Approved")}, []want{notSup("status.conditions[0].type")}},
		{"issued is final", good, certificatesv1.PodCertificateRequestStatus{Conditions: cond(certificatesv1.PodCertificateRequestConditionTypeFailed)}, []want{invalid("status")}},
		{"issued again unchanged", good, good, nil},
	}
	for _, tc := range status {
		t.Run(tc.name, func(t *testing.T) {
			from := old.DeepCopy()
			from.Status = tc.from
			to := from.DeepCopy()
			to.Status = tc.to
			expectErrs(t, ValidateStatusUpdate(to, from), tc.want...)
		})
	}
}
