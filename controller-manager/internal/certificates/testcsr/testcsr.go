// Package testcsr makes CertificateSigningRequests for the CSR
// controllers' tests.
package testcsr

import (
	"crypto/x509/pkix"
	"net"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trireme.dev/componentbase/testpki"
)

// Spec is what a test CSR asks for.
type Spec struct {
	Name, Signer, Username string
	Groups                 []string
	Subject                pkix.Name
	DNS                    []string
	IPs                    []net.IP
	Usages                 []certificatesv1.KeyUsage
}

// Make returns the CSR for s, with a fresh key; it panics on a crypto
// failure, which a test cannot recover from anyway.
func Make(s Spec) *certificatesv1.CertificateSigningRequest {
	req := testpki.NewRequest(testpki.Cert{CommonName: s.Subject.CommonName, Organization: s.Subject.Organization, DNSNames: s.DNS, IPs: s.IPs})
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    req.PEM,
			SignerName: s.Signer, Usages: s.Usages,
			Username: s.Username, Groups: s.Groups,
		},
	}
}

// NodeSubject is the subject of node name's kubelet certificates.
func NodeSubject(name string) pkix.Name {
	return pkix.Name{CommonName: "system:node:" + name, Organization: []string{"system:nodes"}}
}

// ClientUsages and ServingUsages are what kubelets ask for.
var (
	ClientUsages  = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	ServingUsages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
)
