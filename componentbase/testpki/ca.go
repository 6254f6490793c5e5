package testpki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"time"

	"k8s.io/client-go/util/keyutil"
)

// CA is a certificate authority that issues other pairs.
type CA struct {
	// Pair is the CA's own certificate (self-signed, unless loaded) and
	// key.
	Pair
}

// NewCA makes a CA named commonName with a fresh key, valid from an hour
// ago for a day (a test of a signer that caps lifetimes by its CA's
// expiry relies on that day).
func NewCA(commonName string) *CA {
	key := newKey()
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	return &CA{Pair: *sign(tmpl, tmpl, key.Public(), key, key)}
}

// LoadCA reads a CA's PEM certificate and key from files, such as the
// cluster CA a test server made, to issue more certificates with it.
func LoadCA(certFile, keyFile string) (*CA, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("read CA certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("read CA key: %w", err)
	}
	// X509KeyPair also checks that the key is the certificate's.
	kp, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("load CA %s: %w", certFile, err)
	}
	key, ok := kp.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("load CA %s: a %T cannot sign", certFile, kp.PrivateKey)
	}
	return &CA{Pair: Pair{Cert: kp.Leaf, CertPEM: certPEM, Key: key, KeyPEM: keyPEM}}, nil
}

// Issue signs a certificate for c. It panics when c.Usage is unset or
// c.PublicKey is of a type x509 cannot certify.
func (ca *CA) Issue(c Cert) *Pair {
	var eku x509.ExtKeyUsage
	switch c.Usage {
	case ClientAuth:
		eku = x509.ExtKeyUsageClientAuth
	case ServerAuth:
		eku = x509.ExtKeyUsageServerAuth
	default:
		panic(fmt.Sprintf("testpki: certificate for %q has no usage", c.CommonName))
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: c.CommonName, Organization: c.Organization},
		DNSNames:     c.DNSNames,
		IPAddresses:  c.IPs,
		NotBefore:    orDefault(c.NotBefore, now.Add(-time.Hour)),
		NotAfter:     orDefault(c.NotAfter, now.Add(24*time.Hour)),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{eku},
	}
	if c.PublicKey != nil {
		return sign(tmpl, ca.Cert, c.PublicKey, nil, ca.Key)
	}
	key := newKey()
	return sign(tmpl, ca.Cert, key.Public(), key, ca.Key)
}

// sign creates tmpl for pub, signed by parent's signer, with key (nil
// when the caller holds it) as its private key.
func sign(tmpl, parent *x509.Certificate, pub crypto.PublicKey, key *ecdsa.PrivateKey, signer crypto.Signer) *Pair {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		panic(fmt.Sprintf("testpki: sign %q: %v", tmpl.Subject.CommonName, err))
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		panic(fmt.Sprintf("testpki: parse %q: %v", tmpl.Subject.CommonName, err))
	}
	p := &Pair{Cert: cert, CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	if key != nil {
		p.Key, p.KeyPEM = key, keyPEM(key)
	}
	return p
}

func newKey() *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(fmt.Sprintf("testpki: generate key: %v", err))
	}
	return key
}

func keyPEM(key *ecdsa.PrivateKey) []byte {
	b, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		panic(fmt.Sprintf("testpki: marshal key: %v", err))
	}
	return b
}

// serial is random so that certificates issued in the same instant (or by
// two CAs with one name) differ, as a test of reloading may check.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(fmt.Sprintf("testpki: serial number: %v", err))
	}
	return n
}

func orDefault(t, def time.Time) time.Time {
	if t.IsZero() {
		return def
	}
	return t
}
