package certsigning

import (
	"context"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// grants allows exactly the listed verb/name pairs on signers.
type grants map[string]bool

func (g grants) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetResource() == "signers" && g[a.GetVerb()+" "+a.GetName()] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func TestCertificateSigning(t *testing.T) {
	old := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: "example.com/issuer"}}
	issued := old.DeepCopy()
	issued.Status.Certificate = []byte("cert")
	tests := []struct {
		name    string
		grants  grants
		obj     *certificatesv1.CertificateSigningRequest
		wantErr string
	}{
		{"signer may issue", grants{"sign example.com/issuer": true}, issued, ""},
		{"domain wildcard may issue", grants{"sign example.com/*": true}, issued, ""},
		{"others may not issue", grants{"approve example.com/issuer": true}, issued, `user not permitted to sign requests with signerName "example.com/issuer"`},
		{"status without certificate change needs nothing", grants{}, old.DeepCopy(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := admission.NewAttributesRecord(tt.obj, old, certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest"), "", "c",
				certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"), "status", admission.Update, &metav1.UpdateOptions{}, false, &user.DefaultInfo{Name: "signer"})
			p := New()
			p.SetAuthorizer(authorizer.AuthorizerFunc(tt.grants.Authorize))
			err := p.Validate(context.Background(), a, nil)
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
		})
	}
}
