// Package testpki makes certificate authorities, certificates and
// certificate requests for tests, so that no test hand-rolls X.509
// templates. It is for tests only: its keys are ECDSA P-256 and its
// certificates are valid, by default, from an hour ago for a day.
//
// Making keys and signing fail only on a bug in the caller (an unset
// usage, a public key of no known type) or a broken platform, so those
// functions panic, as httptest.NewServer does, and need no testing.TB:
// TestMain, sample tables and helper goroutines use them too. Reading
// and writing files can fail for reasons of the machine, so those
// return errors.
package testpki

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Usage is what a certificate authenticates: a client or a server.
type Usage int

const (
	// ClientAuth is a TLS client certificate.
	ClientAuth Usage = iota + 1
	// ServerAuth is a TLS serving certificate.
	ServerAuth
)

// Cert says what a certificate names and how long it is valid.
type Cert struct {
	// CommonName and Organization are the subject: a Kubernetes user and
	// its groups in a client certificate.
	CommonName   string
	Organization []string
	// DNSNames and IPs are the subject alternative names.
	DNSNames []string
	IPs      []net.IP
	// Usage is required by Issue and must be unset for NewRequest.
	Usage Usage
	// NotBefore and NotAfter default to an hour ago and a day from now.
	NotBefore, NotAfter time.Time
	// PublicKey, when set, is certified instead of a fresh key's (a
	// caller's CSR, say); the Pair then holds no private key.
	PublicKey crypto.PublicKey
}

// Pair is a certificate and, unless the caller brought the public key,
// its private key.
type Pair struct {
	// Cert is the parsed certificate (Cert.Raw is its DER) and CertPEM
	// its PEM encoding.
	Cert    *x509.Certificate
	CertPEM []byte
	// Key is the private key and KeyPEM its PEM encoding ("EC PRIVATE
	// KEY" for the keys made here); both are nil when the Cert brought
	// its own PublicKey.
	Key    crypto.Signer
	KeyPEM []byte
}

// TLSCertificate is p for a tls.Config.
func (p *Pair) TLSCertificate() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{p.Cert.Raw}, PrivateKey: p.Key, Leaf: p.Cert}
}

// Write writes p as dir/name.crt and, when p has a key, dir/name.key
// (keyFile is "" otherwise), readable by the owner only, and returns
// their paths.
func (p *Pair) Write(dir, name string) (certFile, keyFile string, err error) {
	certFile = filepath.Join(dir, name+".crt")
	if p.KeyPEM != nil {
		keyFile = filepath.Join(dir, name+".key")
		if err := os.WriteFile(keyFile, p.KeyPEM, 0o600); err != nil {
			return "", "", fmt.Errorf("write key: %w", err)
		}
	}
	if err := os.WriteFile(certFile, p.CertPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("write certificate: %w", err)
	}
	return certFile, keyFile, nil
}
