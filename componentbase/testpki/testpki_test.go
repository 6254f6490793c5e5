package testpki

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNewCA(t *testing.T) {
	ca := NewCA("test-ca")
	if !ca.Cert.IsCA || ca.Cert.Subject.CommonName != "test-ca" {
		t.Fatalf("CA = IsCA %v, subject %v", ca.Cert.IsCA, ca.Cert.Subject)
	}
	if err := ca.Cert.CheckSignatureFrom(ca.Cert); err != nil {
		t.Errorf("not self-signed: %v", err)
	}
	// A signer's test relies on the CA expiring in a day.
	if left := time.Until(ca.Cert.NotAfter); left > 24*time.Hour || left < 23*time.Hour {
		t.Errorf("CA valid for %s more, want a day", left)
	}
	if block, _ := pem.Decode(ca.CertPEM); block == nil || !slices.Equal(block.Bytes, ca.Cert.Raw) {
		t.Error("CertPEM is not the certificate")
	}
	if NewCA("test-ca").Cert.SerialNumber.Cmp(ca.Cert.SerialNumber) == 0 {
		t.Error("two CAs share a serial number")
	}
}

func TestIssue(t *testing.T) {
	ca := NewCA("test-ca")
	foreign := NewCA("test-ca")
	callerKey := NewRequest(Cert{}).Key
	hourAgo, twoHoursAgo := time.Now().Add(-time.Hour), time.Now().Add(-2*time.Hour)
	tests := []struct {
		name    string
		cert    Cert
		verify  x509.VerifyOptions // Roots and CurrentTime filled in below
		by      *CA
		wantErr string // from Verify; "" for success
		wantKey bool
	}{
		{
			name:    "client certificate for a user in groups",
			cert:    Cert{CommonName: "alice", Organization: []string{"dev", "ops"}, Usage: ClientAuth},
			verify:  x509.VerifyOptions{KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
			wantKey: true,
		},
		{
			name:    "serving certificate for names",
			cert:    Cert{CommonName: "kubelet", DNSNames: []string{"localhost"}, IPs: []net.IP{net.ParseIP("127.0.0.1")}, Usage: ServerAuth},
			verify:  x509.VerifyOptions{DNSName: "127.0.0.1", KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}},
			wantKey: true,
		},
		{
			name:    "serving certificate is no client certificate",
			cert:    Cert{CommonName: "kubelet", Usage: ServerAuth},
			verify:  x509.VerifyOptions{KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
			wantErr: "incompatible key usage",
			wantKey: true,
		},
		{
			name:    "expired",
			cert:    Cert{CommonName: "old", Usage: ClientAuth, NotBefore: twoHoursAgo, NotAfter: hourAgo},
			verify:  x509.VerifyOptions{KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
			wantErr: "expired",
			wantKey: true,
		},
		{
			name:    "signed by another CA of the same name",
			cert:    Cert{CommonName: "mallory", Usage: ClientAuth},
			by:      foreign,
			verify:  x509.VerifyOptions{KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
			wantErr: "unknown authority",
			wantKey: true,
		},
		{
			name:   "caller's public key",
			cert:   Cert{CommonName: "system:node:n1", Usage: ClientAuth, PublicKey: callerKey.Public()},
			verify: x509.VerifyOptions{KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			by := ca
			if tt.by != nil {
				by = tt.by
			}
			p := by.Issue(tt.cert)
			if p.Cert.Subject.CommonName != tt.cert.CommonName || !slices.Equal(p.Cert.Subject.Organization, tt.cert.Organization) {
				t.Errorf("subject = %v", p.Cert.Subject)
			}
			if (p.Key != nil) != tt.wantKey || (p.KeyPEM != nil) != tt.wantKey {
				t.Errorf("has key = %v, want %v", p.Key != nil, tt.wantKey)
			}
			if tt.cert.PublicKey != nil && !samePublicKey(callerKey.Public(), p.Cert.PublicKey) {
				t.Error("the caller's public key is not the certificate's")
			}
			opts := tt.verify
			opts.Roots = x509.NewCertPool()
			opts.Roots.AddCert(ca.Cert)
			_, err := p.Cert.Verify(opts)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Verify = %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}

func TestIssueWithoutUsagePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Issue without a usage did not panic")
		}
	}()
	NewCA("test-ca").Issue(Cert{CommonName: "x"})
}

// TestTLSHandshake serves a ServerAuth pair and demands a ClientAuth one,
// both from one CA, as a kubelet and the apiserver do.
func TestTLSHandshake(t *testing.T) {
	ca := NewCA("test-ca")
	server := ca.Issue(Cert{CommonName: "server", IPs: []net.IP{net.ParseIP("127.0.0.1")}, Usage: ServerAuth})
	client := ca.Issue(Cert{CommonName: "client", Usage: ClientAuth})
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	sc, cc := net.Pipe()
	// Closing the pipe, not the TLS connections, which would block on
	// close_notify alerts nobody reads.
	defer sc.Close()
	defer cc.Close()
	srv := tls.Server(sc, &tls.Config{Certificates: []tls.Certificate{server.TLSCertificate()}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert})
	cli := tls.Client(cc, &tls.Config{Certificates: []tls.Certificate{client.TLSCertificate()}, RootCAs: pool, ServerName: "127.0.0.1"})
	errs := make(chan error, 1)
	go func() { errs <- srv.Handshake() }()
	if err := cli.Handshake(); err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	if err := <-errs; err != nil {
		t.Fatalf("server handshake: %v", err)
	}
	if got := srv.ConnectionState().PeerCertificates[0].Subject.CommonName; got != "client" {
		t.Errorf("server saw client %q", got)
	}
}

func TestWriteAndLoadCA(t *testing.T) {
	dir := t.TempDir()
	ca := NewCA("test-ca")
	caCert, caKey, err := ca.Write(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadCA(caCert, caKey)
	if err != nil {
		t.Fatal(err)
	}
	if !loaded.Cert.Equal(ca.Cert) {
		t.Fatal("loaded another certificate")
	}
	p := loaded.Issue(Cert{CommonName: "alice", Usage: ClientAuth})
	if err := p.Cert.CheckSignatureFrom(ca.Cert); err != nil {
		t.Errorf("issued by the loaded CA, not signed by the CA: %v", err)
	}
	certOnly, _, err := ca.Issue(Cert{CommonName: "bob", Usage: ClientAuth, PublicKey: p.Key.Public()}).Write(dir, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := NewCA("other").Write(dir, "other"); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name              string
		certFile, keyFile string
		wantErr           string
	}{
		{name: "written CA", certFile: caCert, keyFile: caKey},
		{name: "missing certificate", certFile: filepath.Join(dir, "nope.crt"), keyFile: caKey, wantErr: "read CA certificate"},
		{name: "missing key", certFile: caCert, keyFile: filepath.Join(dir, "bob.key"), wantErr: "read CA key"},
		{name: "another CA's key", certFile: caCert, keyFile: filepath.Join(dir, "other.key"), wantErr: "load CA"},
		{name: "certificate without key", certFile: certOnly, keyFile: certOnly, wantErr: "load CA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadCA(tt.certFile, tt.keyFile)
			if tt.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("LoadCA = %v, want an error with %q", err, tt.wantErr)
			}
		})
	}

	for _, f := range []string{caCert, caKey, certOnly} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bob.key")); !os.IsNotExist(err) {
		t.Errorf("a key was written for a certificate of the caller's key: %v", err)
	}
}

func TestNewRequest(t *testing.T) {
	tests := []struct {
		name string
		c    Cert
	}{
		{name: "node client", c: Cert{CommonName: "system:node:n1", Organization: []string{"system:nodes"}}},
		{name: "node serving", c: Cert{CommonName: "system:node:n1", DNSNames: []string{"n1"}, IPs: []net.IP{net.ParseIP("10.0.0.1")}}},
		{name: "empty stub", c: Cert{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRequest(tt.c)
			block, _ := pem.Decode(r.PEM)
			if block == nil || block.Type != "CERTIFICATE REQUEST" || !slices.Equal(block.Bytes, r.DER) {
				t.Fatalf("PEM is not the request: %q", r.PEM)
			}
			req, err := x509.ParseCertificateRequest(r.DER)
			if err != nil {
				t.Fatal(err)
			}
			if err := req.CheckSignature(); err != nil {
				t.Errorf("signature: %v", err)
			}
			if req.Subject.CommonName != tt.c.CommonName || !slices.Equal(req.Subject.Organization, tt.c.Organization) || !slices.Equal(req.DNSNames, tt.c.DNSNames) || len(req.IPAddresses) != len(tt.c.IPs) {
				t.Errorf("request = %v %v %v", req.Subject, req.DNSNames, req.IPAddresses)
			}
			if !samePublicKey(r.Key.Public(), req.PublicKey) {
				t.Error("Key is not the request's")
			}
			kp, err := tls.X509KeyPair(NewCA("ca").Issue(Cert{CommonName: "x", Usage: ClientAuth, PublicKey: r.Key.Public()}).CertPEM, r.KeyPEM)
			if err != nil || kp.PrivateKey == nil {
				t.Errorf("KeyPEM does not pair with a certificate for Key: %v", err)
			}
		})
	}
}

func TestNewRequestWithCertificateFieldsPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewRequest with a usage did not panic")
		}
	}()
	NewRequest(Cert{CommonName: "x", Usage: ClientAuth})
}

func samePublicKey(a, b crypto.PublicKey) bool {
	k, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(b)
}
