package certsigning

import (
	"context"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"

	"trireme.dev/apiserver/internal/admissionchain/admissiontest"
)

func TestCertificateSigning(t *testing.T) {
	old := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: "example.com/issuer"}}
	issued := old.DeepCopy()
	issued.Status.Certificate = []byte("cert")
	tests := []struct {
		name    string
		grants  admissiontest.Grants
		obj     *certificatesv1.CertificateSigningRequest
		wantErr string
	}{
		{"signer may issue", admissiontest.Grants{"sign signers example.com/issuer": true}, issued, ""},
		{"domain wildcard may issue", admissiontest.Grants{"sign signers example.com/*": true}, issued, ""},
		{"others may not issue", admissiontest.Grants{"approve signers example.com/issuer": true}, issued, `user not permitted to sign requests with signerName "example.com/issuer"`},
		{"status without certificate change needs nothing", admissiontest.Grants{}, old.DeepCopy(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := admission.NewAttributesRecord(tt.obj, old, certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest"), "", "c",
				certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"), "status", admission.Update, &metav1.UpdateOptions{}, false, &user.DefaultInfo{Name: "signer"})
			p := New()
			p.SetAuthorizer(tt.grants.Authorizer())
			err := p.Validate(context.Background(), a, nil)
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestPodCertificateSigning(t *testing.T) {
	old := &certificatesv1.PodCertificateRequest{Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/mesh"}}
	denied := old.DeepCopy()
	denied.Status.Conditions = []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeDenied, Status: metav1.ConditionTrue}}
	tests := []struct {
		name        string
		grants      admissiontest.Grants
		subresource string
		wantErr     string
	}{
		{"signer may answer", admissiontest.Grants{"sign signers example.com/mesh": true}, "status", ""},
		{"others may not, even to deny", admissiontest.Grants{}, "status", `user "signer" is not permitted to "sign" for signer "example.com/mesh"`},
		{"the main resource needs nothing", admissiontest.Grants{}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := admission.NewAttributesRecord(denied, old, certificatesv1.SchemeGroupVersion.WithKind("PodCertificateRequest"), "demo", "web-1",
				certificatesv1.SchemeGroupVersion.WithResource("podcertificaterequests"), tt.subresource, admission.Update, &metav1.UpdateOptions{}, false, &user.DefaultInfo{Name: "signer"})
			p := New()
			p.SetAuthorizer(tt.grants.Authorizer())
			err := p.Validate(context.Background(), a, nil)
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
		})
	}
}
