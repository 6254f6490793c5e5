// Package testcsr makes CertificateSigningRequests for the CSR
// controllers' tests.
package testcsr

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// Make returns the CSR for s, with a fresh ECDSA key; it panics on a
// crypto failure, which a test cannot recover from anyway.
func Make(s Spec) *certificatesv1.CertificateSigningRequest {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: s.Subject, DNSNames: s.DNS, IPAddresses: s.IPs}, key)
	if err != nil {
		panic(err)
	}
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
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
