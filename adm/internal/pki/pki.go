// Package pki creates and checks the cluster's certificates and keys, with kubeadm's
// names and contents below the certificates directory (ca.crt, apiserver.crt,
// etcd/server.crt, sa.key, ...). Keys are ECDSA P-256 (kubeadm's ECDSA-P256
// encryption algorithm); CAs live ten years, other certificates one year. Existing
// files are reused when they are still valid for what is asked; a certificate that
// is not (another CA, missing SANs, expired) is an error, never silently replaced.
package pki

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Validity periods.
const (
	CAValidity   = 10 * 365 * 24 * time.Hour
	CertValidity = 365 * 24 * time.Hour
)

// Spec describes one certificate and its key, stored as <dir>/<Name>.crt and .key.
type Spec struct {
	// Name is the base path below the certificates directory, e.g. "etcd/server".
	Name string
	// CA is the Name of the signing CA; empty for a self-signed CA.
	CA string
	// CommonName and Organization form the subject (user name and groups for clients).
	CommonName   string
	Organization []string
	// Usages are the extended key usages of a leaf certificate.
	Usages []x509.ExtKeyUsage
	// DNSNames and IPs are the subject alternative names.
	DNSNames []string
	IPs      []net.IP
}

// IsCA reports whether s is a certificate authority.
func (s Spec) IsCA() bool { return s.CA == "" }

// Action says what Ensure did with a certificate.
type Action string

// The actions.
const (
	Generated Action = "generated"
	Reused    Action = "reused"
)

// KeyPair is a parsed certificate and its key.
type KeyPair struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// CertPath returns the certificate file of name below dir.
func CertPath(dir, name string) string { return filepath.Join(dir, name+".crt") }

// KeyPath returns the key file of name below dir.
func KeyPath(dir, name string) string { return filepath.Join(dir, name+".key") }

// Ensure makes sure the certificate of spec exists below dir, signed by its CA (which
// must already exist there), valid now and holding every SAN and usage spec asks for.
func Ensure(dir string, spec Spec, now time.Time) (Action, error) {
	var ca *KeyPair
	if !spec.IsCA() {
		var err error
		if ca, err = Load(dir, spec.CA); err != nil {
			return "", fmt.Errorf("certificate %s: its CA: %w", spec.Name, err)
		}
	}
	existing, err := Load(dir, spec.Name)
	switch {
	case err == nil:
		if err := check(existing, ca, spec, now); err != nil {
			return "", fmt.Errorf("existing certificate %s is not usable (remove %s and %s to regenerate): %w",
				spec.Name, CertPath(dir, spec.Name), KeyPath(dir, spec.Name), err)
		}
		return Reused, nil
	case !errors.Is(err, os.ErrNotExist):
		return "", err
	}
	if _, statErr := os.Stat(CertPath(dir, spec.Name)); statErr == nil {
		return "", fmt.Errorf("certificate %s exists without its key %s", CertPath(dir, spec.Name), KeyPath(dir, spec.Name))
	}
	kp, err := Issue(spec, ca, now)
	if err != nil {
		return "", fmt.Errorf("issue %s: %w", spec.Name, err)
	}
	if err := Write(dir, spec.Name, kp); err != nil {
		return "", err
	}
	return Generated, nil
}

// Issue creates a new key and a certificate for spec, signed by ca (nil for a CA).
func Issue(spec Spec, ca *KeyPair, now time.Time) (*KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: spec.CommonName, Organization: spec.Organization},
		NotBefore:    now.Add(-5 * time.Minute).UTC(),
		DNSNames:     spec.DNSNames,
		IPAddresses:  spec.IPs,
	}
	signer, parent := crypto.Signer(key), tmpl
	if spec.IsCA() {
		tmpl.NotAfter = now.Add(CAValidity).UTC()
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
		tmpl.BasicConstraintsValid = true
		tmpl.IsCA = true
	} else {
		tmpl.NotAfter = now.Add(CertValidity).UTC()
		if ca.Cert.NotAfter.Before(tmpl.NotAfter) {
			tmpl.NotAfter = ca.Cert.NotAfter
		}
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
		tmpl.ExtKeyUsage = spec.Usages
		tmpl.BasicConstraintsValid = true
		tmpl.AuthorityKeyId = ca.Cert.SubjectKeyId
		signer, parent = ca.Key, ca.Cert
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), signer)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &KeyPair{Cert: cert, Key: key}, nil
}

// Write stores kp as name.crt (0644) and name.key (0600) below dir.
func Write(dir, name string, kp *KeyPair) error {
	keyPEM, err := EncodeKey(kp.Key)
	if err != nil {
		return err
	}
	if err := WriteFile(KeyPath(dir, name), keyPEM, 0o600); err != nil {
		return err
	}
	return WriteFile(CertPath(dir, name), EncodeCert(kp.Cert), 0o644)
}

// WriteFile writes data to path atomically, creating its directory.
func WriteFile(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	// A dot file beside it: readers of the directory (the kubelet's static
	// pod source) skip it.
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// EncodeCert returns cert as PEM.
func EncodeCert(cert *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
}

// EncodeKey returns key as PEM ("EC PRIVATE KEY" for ECDSA keys).
func EncodeKey(key crypto.Signer) ([]byte, error) {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
	default:
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
	}
}

// Load reads name.crt and name.key below dir; a missing file gives an error
// wrapping os.ErrNotExist.
func Load(dir, name string) (*KeyPair, error) {
	certPEM, err := os.ReadFile(CertPath(dir, name))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(KeyPath(dir, name))
	if err != nil {
		return nil, err
	}
	cert, err := ParseCert(certPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", CertPath(dir, name), err)
	}
	key, err := ParseKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", KeyPath(dir, name), err)
	}
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("%s does not match the key %s", CertPath(dir, name), KeyPath(dir, name))
	}
	return &KeyPair{Cert: cert, Key: key}, nil
}

// ParseCert parses the first PEM certificate of data.
func ParseCert(data []byte) (*x509.Certificate, error) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, errors.New("no PEM certificate")
		}
		if b.Type == "CERTIFICATE" {
			return x509.ParseCertificate(b.Bytes)
		}
	}
}

// ParseKey parses a PEM private key (EC, PKCS#1 RSA or PKCS#8).
func ParseKey(data []byte) (crypto.Signer, error) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, errors.New("no PEM private key")
		}
		var (
			k   any
			err error
		)
		switch b.Type {
		case "EC PRIVATE KEY":
			k, err = x509.ParseECPrivateKey(b.Bytes)
		case "RSA PRIVATE KEY":
			k, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		case "PRIVATE KEY":
			k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("key of type %T cannot sign", k)
		}
		return s, nil
	}
}

// check reports why kp does not satisfy spec, if it does not.
func check(kp *KeyPair, ca *KeyPair, spec Spec, now time.Time) error {
	c := kp.Cert
	if now.After(c.NotAfter) {
		return fmt.Errorf("expired on %s", c.NotAfter.Format(time.RFC3339))
	}
	if now.Before(c.NotBefore) {
		return fmt.Errorf("not valid before %s", c.NotBefore.Format(time.RFC3339))
	}
	if spec.IsCA() {
		if !c.IsCA {
			return errors.New("not a CA certificate")
		}
		return nil
	}
	if err := c.CheckSignatureFrom(ca.Cert); err != nil {
		return fmt.Errorf("not signed by %s: %w", spec.CA, err)
	}
	for _, u := range spec.Usages {
		if !slices.Contains(c.ExtKeyUsage, u) {
			return fmt.Errorf("lacks extended key usage %v", u)
		}
	}
	for _, d := range spec.DNSNames {
		if !slices.Contains(c.DNSNames, d) {
			return fmt.Errorf("lacks SAN %s", d)
		}
	}
	for _, ip := range spec.IPs {
		if !slices.ContainsFunc(c.IPAddresses, ip.Equal) {
			return fmt.Errorf("lacks SAN %s", ip)
		}
	}
	if c.Subject.CommonName != spec.CommonName {
		return fmt.Errorf("common name %q, want %q", c.Subject.CommonName, spec.CommonName)
	}
	return nil
}

// EnsureServiceAccountKey makes sure sa.key and sa.pub exist below dir, the key pair
// the apiserver verifies and the controller-manager signs service account tokens
// with.
func EnsureServiceAccountKey(dir string) (Action, error) {
	keyPath, pubPath := filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	if data, err := os.ReadFile(keyPath); err == nil {
		key, err := ParseKey(data)
		if err != nil {
			return "", fmt.Errorf("%s: %w", keyPath, err)
		}
		pubPEM, err := EncodePublicKey(key.Public())
		if err != nil {
			return "", err
		}
		if old, err := os.ReadFile(pubPath); err == nil && bytes.Equal(old, pubPEM) {
			return Reused, nil
		}
		// The public half follows from the private key; rewrite it.
		return Reused, WriteFile(pubPath, pubPEM, 0o644)
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	keyPEM, err := EncodeKey(key)
	if err != nil {
		return "", err
	}
	pubPEM, err := EncodePublicKey(key.Public())
	if err != nil {
		return "", err
	}
	if err := WriteFile(keyPath, keyPEM, 0o600); err != nil {
		return "", err
	}
	return Generated, WriteFile(pubPath, pubPEM, 0o644)
}

// EncodePublicKey returns pub as a PEM "PUBLIC KEY" (PKIX).
func EncodePublicKey(pub crypto.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}
