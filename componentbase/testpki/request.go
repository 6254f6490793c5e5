package testpki

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
)

// Request is a PKCS#10 certificate signing request and its fresh key.
type Request struct {
	// DER is the request as a PodCertificateRequest's stub carries it;
	// PEM as a CertificateSigningRequest's spec.request does.
	DER, PEM []byte
	// Key is the requesting private key and KeyPEM its PEM encoding,
	// for a client that uses the certificate issued for the request.
	Key    crypto.Signer
	KeyPEM []byte
}

// NewRequest makes a key and a request for it asking for c's subject and
// names. Usage, validity and the key are the signer's or the request's
// own, so it panics when c sets them: a test that did would be asking
// for something no request carries.
func NewRequest(c Cert) *Request {
	if c.Usage != 0 || !c.NotBefore.IsZero() || !c.NotAfter.IsZero() || c.PublicKey != nil {
		panic(fmt.Sprintf("testpki: request for %q sets a usage, a validity or a key", c.CommonName))
	}
	key := newKey()
	tmpl := &x509.CertificateRequest{
		Subject:     pkix.Name{CommonName: c.CommonName, Organization: c.Organization},
		DNSNames:    c.DNSNames,
		IPAddresses: c.IPs,
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		panic(fmt.Sprintf("testpki: create request: %v", err))
	}
	return &Request{
		DER:    der,
		PEM:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
		Key:    key,
		KeyPEM: keyPEM(key),
	}
}
