package certapproval

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

func TestCertificateApproval(t *testing.T) {
	tests := []struct {
		name        string
		grants      admissiontest.Grants
		subresource string
		wantErr     string
	}{
		{"approver allowed", admissiontest.Grants{"approve signers kubernetes.io/kube-apiserver-client": true}, "approval", ""},
		{"domain wildcard allowed", admissiontest.Grants{"approve signers kubernetes.io/*": true}, "approval", ""},
		{"no grant refused", admissiontest.Grants{"sign signers kubernetes.io/kube-apiserver-client": true}, "approval", `user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"`},
		{"other subresources ignored", admissiontest.Grants{}, "status", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			csr := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: certificatesv1.KubeAPIServerClientSignerName}}
			a := admission.NewAttributesRecord(csr, csr, certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest"), "", "c",
				certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"), tt.subresource, admission.Update, &metav1.UpdateOptions{}, false, &user.DefaultInfo{Name: "approver"})
			p := New()
			p.SetAuthorizer(tt.grants.Authorizer())
			err := p.Validate(context.Background(), a, nil)
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
		})
	}
}
