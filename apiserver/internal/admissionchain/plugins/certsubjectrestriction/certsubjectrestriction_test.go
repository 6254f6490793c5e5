package certsubjectrestriction

import (
	"context"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"

	"trireme.dev/componentbase/testpki"
)

func TestCertificateSubjectRestriction(t *testing.T) {
	tests := []struct {
		name    string
		signer  string
		orgs    []string
		wantErr string
	}{
		{"masters via apiserver client signer refused", certificatesv1.KubeAPIServerClientSignerName, []string{"dev", "system:masters"}, "use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"},
		{"ordinary group allowed", certificatesv1.KubeAPIServerClientSignerName, []string{"dev"}, ""},
		{"other signer not restricted", "example.com/signer", []string{"system:masters"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			csr := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{SignerName: tt.signer, Request: testpki.NewRequest(testpki.Cert{CommonName: "u", Organization: tt.orgs}).PEM}}
			a := admission.NewAttributesRecord(csr, nil, certificatesv1.SchemeGroupVersion.WithKind("CertificateSigningRequest"), "", "c",
				certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"), "", admission.Create, &metav1.CreateOptions{}, false, nil)
			err := (&Plugin{Handler: admission.NewHandler(admission.Create)}).Validate(context.Background(), a, nil)
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("got %v, want %q", err, tt.wantErr)
			}
		})
	}
}
