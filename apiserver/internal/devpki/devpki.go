// Package devpki makes the certificates of the apiserver's standalone dev
// mode: a cluster CA, a serving certificate signed by it, and an admin
// client certificate written as a kubeconfig. Existing files are reused so a
// restart keeps the same identity.
package devpki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// Files are the paths of what Ensure makes.
type Files struct {
	CACert, CAKey           string
	ServingCert, ServingKey string
	// FrontProxyCACert signs FrontProxyClientCert, the certificate the
	// aggregator presents to extension apiservers.
	FrontProxyCACert, FrontProxyCAKey         string
	FrontProxyClientCert, FrontProxyClientKey string
	AdminKubeconfig                           string
	SuperAdminKubeconfig                      string
	adminCertDir                              string
}

// Layout returns the file layout under dataDir.
func Layout(dataDir string) Files {
	pki := filepath.Join(dataDir, "pki")
	return Files{
		CACert:               filepath.Join(pki, "ca.crt"),
		CAKey:                filepath.Join(pki, "ca.key"),
		ServingCert:          filepath.Join(pki, "apiserver.crt"),
		ServingKey:           filepath.Join(pki, "apiserver.key"),
		FrontProxyCACert:     filepath.Join(pki, "front-proxy-ca.crt"),
		FrontProxyCAKey:      filepath.Join(pki, "front-proxy-ca.key"),
		FrontProxyClientCert: filepath.Join(pki, "front-proxy-client.crt"),
		FrontProxyClientKey:  filepath.Join(pki, "front-proxy-client.key"),
		AdminKubeconfig:      filepath.Join(dataDir, "admin.kubeconfig"),
		SuperAdminKubeconfig: filepath.Join(dataDir, "super-admin.kubeconfig"),
		adminCertDir:         pki,
	}
}

// Options say what the serving certificate must cover and where clients
// find the server.
type Options struct {
	// Hosts are the DNS names and IPs the serving certificate is valid for.
	Hosts []string
	// Server is the URL written into the kubeconfigs.
	Server string
}

// AdminGroup is the group of the admin kubeconfig's identity; the bootstrap
// policy binds it to cluster-admin, as kubeadm does.
const AdminGroup = "kubeadm:cluster-admins"

// Ensure creates the CA and serving certificate if missing and (re)writes
// the admin kubeconfig pointing at opts.Server.
func Ensure(f Files, opts Options) error {
	if err := os.MkdirAll(filepath.Dir(f.CACert), 0o700); err != nil {
		return fmt.Errorf("create pki dir: %w", err)
	}
	caCert, caKey, err := loadOrMakeCA(f.CACert, f.CAKey, "trireme-ca")
	if err != nil {
		return err
	}
	if err := ensureFrontProxy(f); err != nil {
		return err
	}
	if !exists(f.ServingCert) || !exists(f.ServingKey) {
		var ips []net.IP
		var dns []string
		for _, h := range opts.Hosts {
			if ip := net.ParseIP(h); ip != nil {
				ips = append(ips, ip)
			} else {
				dns = append(dns, h)
			}
		}
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: "kube-apiserver"},
			KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			DNSNames:    dns,
			IPAddresses: ips,
		}
		if err := writeSigned(f.ServingCert, f.ServingKey, tmpl, caCert, caKey); err != nil {
			return fmt.Errorf("serving certificate: %w", err)
		}
	}
	// As kubeadm separates them: admin's group is bound to cluster-admin by
	// the bootstrap policy, so RBAC can still take it away; super-admin is
	// in system:masters, which no authorizer can deny.
	for _, kc := range []struct {
		path, name, cn, org string
	}{
		{f.AdminKubeconfig, "admin", "kubernetes-admin", AdminGroup},
		{f.SuperAdminKubeconfig, "super-admin", "kubernetes-super-admin", "system:masters"},
	} {
		if err := writeKubeconfig(kc.path, kc.name, kc.cn, kc.org, opts.Server, caCert, caKey); err != nil {
			return err
		}
	}
	return nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// FrontProxyClientName is the front-proxy client certificate's CN, the
// name extension apiservers allow (--requestheader-allowed-names).
const FrontProxyClientName = "front-proxy-client"

// ensureFrontProxy makes the front-proxy CA and its client certificate, as
// kubeadm does: a CA of its own, so that a certificate from the cluster CA
// cannot pass for the aggregator.
func ensureFrontProxy(f Files) error {
	caCert, caKey, err := loadOrMakeCA(f.FrontProxyCACert, f.FrontProxyCAKey, "front-proxy-ca")
	if err != nil {
		return err
	}
	if exists(f.FrontProxyClientCert) && exists(f.FrontProxyClientKey) {
		return nil
	}
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: FrontProxyClientName},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if err := writeSigned(f.FrontProxyClientCert, f.FrontProxyClientKey, tmpl, caCert, caKey); err != nil {
		return fmt.Errorf("front-proxy client certificate: %w", err)
	}
	return nil
}

func loadOrMakeCA(certPath, keyPath, cn string) (*x509.Certificate, crypto.Signer, error) {
	if exists(certPath) && exists(keyPath) {
		certs, err := certutil.CertsFromFile(certPath)
		if err != nil {
			return nil, nil, fmt.Errorf("read CA: %w", err)
		}
		key, err := keyutil.PrivateKeyFromFile(keyPath)
		if err != nil {
			return nil, nil, fmt.Errorf("read CA key: %w", err)
		}
		signer, ok := key.(crypto.Signer)
		if !ok {
			return nil, nil, fmt.Errorf("CA key %s cannot sign", keyPath)
		}
		return certs[0], signer, nil
	}
	// An RSA CA, as kubeadm makes: every request's client certificate is
	// verified against it, and RSA verification is several times cheaper
	// than ECDSA's (it showed as a tenth of the server's CPU under load).
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, err
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: cn}, key)
	if err != nil {
		return nil, nil, fmt.Errorf("make CA: %w", err)
	}
	if err := writeKey(keyPath, key); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(certPath, encodeCert(ca), 0o644); err != nil {
		return nil, nil, fmt.Errorf("write CA: %w", err)
	}
	return ca, key, nil
}

func writeKey(path string, key crypto.PrivateKey) error {
	pemBytes, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return fmt.Errorf("encode key: %w", err)
	}
	if err := os.WriteFile(path, pemBytes, 0o600); err != nil {
		return fmt.Errorf("write key %s: %w", path, err)
	}
	return nil
}

// sign issues a certificate from tmpl for a new key, signed by the CA.
func sign(tmpl *x509.Certificate, caCert *x509.Certificate, caKey crypto.Signer) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-5 * time.Minute).UTC()
	tmpl.NotAfter = time.Now().Add(365 * 24 * time.Hour).UTC()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, key.Public(), caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("sign certificate %s: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func writeSigned(certPath, keyPath string, tmpl, caCert *x509.Certificate, caKey crypto.Signer) error {
	cert, key, err := sign(tmpl, caCert, caKey)
	if err != nil {
		return err
	}
	if err := writeKey(keyPath, key); err != nil {
		return err
	}
	return os.WriteFile(certPath, encodeCert(cert), 0o644)
}

func writeKubeconfig(path, name, cn, org, server string, caCert *x509.Certificate, caKey crypto.Signer) error {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: cn, Organization: []string{org}},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	cert, key, err := sign(tmpl, caCert, caKey)
	if err != nil {
		return err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["trireme"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: encodeCert(caCert)}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: encodeCert(cert), ClientKeyData: keyPEM}
	ctxName := name + "@trireme"
	cfg.Contexts[ctxName] = &clientcmdapi.Context{Cluster: "trireme", AuthInfo: name}
	cfg.CurrentContext = ctxName
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return os.Chmod(path, 0o600)
}

func encodeCert(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: c.Raw})
}
