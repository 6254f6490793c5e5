package proxy

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"

	"trireme.dev/componentbase/testpki"
)

// KubeletClientCN is the common name of the client certificate TestPKI
// issues to the apiserver.
const KubeletClientCN = "trireme-apiserver-kubelet-client"

// TestPKI is a CA with a serving certificate for a fake kubelet and a
// client certificate for the apiserver. It is exported for the
// integration test in package proxy_test.
type TestPKI struct {
	CA             *testpki.CA
	Server, Client *testpki.Pair
}

// NewTestPKI issues the certificates; the serving one names ips.
func NewTestPKI(ips ...string) *TestPKI {
	ca := testpki.NewCA("test-kubelet-ca")
	server := testpki.Cert{CommonName: "test-kubelet", Usage: testpki.ServerAuth}
	for _, ip := range ips {
		server.IPs = append(server.IPs, net.ParseIP(ip))
	}
	return &TestPKI{
		CA:     ca,
		Server: ca.Issue(server),
		Client: ca.Issue(testpki.Cert{CommonName: KubeletClientCN, Usage: testpki.ClientAuth}),
	}
}

// WriteClientFiles writes the CA certificate and the apiserver's client
// pair under dir as name-ca.crt, name-client.crt and name-client.key,
// for the apiserver's --kubelet-* flags.
func (p *TestPKI) WriteClientFiles(t *testing.T, dir, name string) (caFile, certFile, keyFile string) {
	t.Helper()
	caFile, _, err := p.CA.Write(dir, name+"-ca")
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err = p.Client.Write(dir, name+"-client")
	if err != nil {
		t.Fatal(err)
	}
	return caFile, certFile, keyFile
}

// ServerTLS is the fake kubelet's TLS config: it serves the serving
// certificate and demands a client certificate from the CA.
func (p *TestPKI) ServerTLS() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(p.CA.Cert)
	return &tls.Config{Certificates: []tls.Certificate{p.Server.TLSCertificate()}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
}
