package csrsigning

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testpki"
	"trireme.dev/controller-manager/internal/certificates"
	"trireme.dev/controller-manager/internal/certificates/testcsr"
)

func approved(s testcsr.Spec, expiration *int32) *certificatesv1.CertificateSigningRequest {
	csr := testcsr.Make(s)
	csr.Spec.ExpirationSeconds = expiration
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
	return csr
}

func TestSync(t *testing.T) {
	node := testcsr.NodeSubject("n1")
	tests := []struct {
		name       string
		csr        *certificatesv1.CertificateSigningRequest
		wantCert   bool
		wantFailed bool
		wantTTL    time.Duration
	}{
		{"kubelet client signed", approved(testcsr.Spec{Name: "c", Signer: certificatesv1.KubeAPIServerClientKubeletSignerName, Subject: node, Usages: testcsr.ClientUsages}, nil), true, false, 24 * time.Hour},
		{"expirationSeconds shortens", approved(testcsr.Spec{Name: "c", Signer: certificatesv1.KubeAPIServerClientKubeletSignerName, Subject: node, Usages: testcsr.ClientUsages}, ptr.To[int32](3600)), true, false, time.Hour},
		{"kubelet serving signed", approved(testcsr.Spec{Name: "c", Signer: certificatesv1.KubeletServingSignerName, Subject: node, DNS: []string{"n1"}, IPs: []net.IP{net.ParseIP("10.0.0.1")}, Usages: testcsr.ServingUsages}, nil), true, false, 24 * time.Hour},
		{"apiserver client signed", approved(testcsr.Spec{Name: "c", Signer: certificatesv1.KubeAPIServerClientSignerName, Subject: pkix.Name{CommonName: "alice"}, Usages: testcsr.ClientUsages}, nil), true, false, 24 * time.Hour},
		{"invalid kubelet client fails", approved(testcsr.Spec{Name: "c", Signer: certificatesv1.KubeAPIServerClientKubeletSignerName, Subject: pkix.Name{CommonName: "alice"}, Usages: testcsr.ClientUsages}, nil), false, true, 0},
		{"unapproved is not signed", testcsr.Make(testcsr.Spec{Name: "c", Signer: certificatesv1.KubeAPIServerClientKubeletSignerName, Subject: node, Usages: testcsr.ClientUsages}), false, false, 0},
		{"foreign signer is not signed", approved(testcsr.Spec{Name: "c", Signer: "example.com/signer", Subject: node, Usages: testcsr.ClientUsages}, nil), false, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			testCA := testpki.NewCA("test-ca")
			ca := &CA{Cert: testCA.Cert, Key: testCA.Key}
			client := fake.NewClientset(tt.csr)
			factory := informers.NewSharedInformerFactory(client, 0)
			cas := map[string]*CA{}
			for _, s := range []string{certificatesv1.KubeAPIServerClientKubeletSignerName, certificatesv1.KubeletServingSignerName, certificatesv1.KubeAPIServerClientSignerName} {
				cas[s] = ca
			}
			c, err := New(Options{Client: client, CSRs: factory.Certificates().V1().CertificateSigningRequests(), Recorder: record.NewFakeRecorder(10), CAs: cas, MaxTTL: 365 * 24 * time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			factory.Start(ctx.Done())
			factory.WaitForCacheSync(ctx.Done())
			if err := c.sync(ctx, "c"); err != nil {
				t.Fatal(err)
			}
			got, _ := client.CertificatesV1().CertificateSigningRequests().Get(ctx, "c", metav1.GetOptions{})
			if certificates.Failed(got) != tt.wantFailed {
				t.Errorf("failed = %v, want %v", certificates.Failed(got), tt.wantFailed)
			}
			if (len(got.Status.Certificate) > 0) != tt.wantCert {
				t.Fatalf("certificate issued = %v, want %v", len(got.Status.Certificate) > 0, tt.wantCert)
			}
			if !tt.wantCert {
				return
			}
			block, _ := pem.Decode(got.Status.Certificate)
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if err := cert.CheckSignatureFrom(ca.Cert); err != nil {
				t.Errorf("not signed by the CA: %v", err)
			}
			// The CA's own expiry (testpki's CAs live a day) caps the 1-year default.
			if left := time.Until(cert.NotAfter); left > tt.wantTTL || left < tt.wantTTL-2*time.Minute {
				t.Errorf("valid for %s more, want about %s", left, tt.wantTTL)
			}
		})
	}
}
