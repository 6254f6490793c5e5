package discovery

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/cluster-bootstrap/token/jws"
)

func testCA(t *testing.T) (*x509.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "trireme"}, NotBefore: time.Now(),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestVerify(t *testing.T) {
	ca, caPEM := testCA(t)
	other, _ := testCA(t)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[""] = &clientcmdapi.Cluster{Server: "https://10.0.0.1:6443", CertificateAuthorityData: caPEM}
	content, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	const token = "abcdef.0123456789abcdef"
	sig, err := jws.ComputeDetachedSignature(string(content), "abcdef", "0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	signed := map[string]string{bootstrapapi.KubeConfigKey: string(content), bootstrapapi.JWSSignatureKeyPrefix + "abcdef": sig}
	tests := []struct {
		name   string
		data   map[string]string
		token  string
		hashes []string
		skip   bool
		want   string // error substring; "" for success
	}{
		{"pinned", signed, token, []string{CAHash(ca)}, false, ""},
		{"pinned among others", signed, token, []string{CAHash(other), strings.ToUpper(CAHash(ca))}, false, ""},
		{"unsafe skip", signed, token, nil, true, ""},
		{"wrong pin", signed, token, []string{CAHash(other)}, false, "matches none"},
		{"wrong secret", signed, "abcdef.ffffffffffffffff", []string{CAHash(ca)}, false, "does not match"},
		{"not signed for the token", signed, "zzzzzz.0123456789abcdef", []string{CAHash(ca)}, false, "not signed"},
		{"no kubeconfig", map[string]string{}, token, []string{CAHash(ca)}, false, "has no"},
		{"malformed token", signed, "nodot", []string{CAHash(ca)}, false, "<id>.<secret>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Verify(tt.data, tt.token, tt.hashes, tt.skip)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if res.Server != "https://10.0.0.1:6443" || !res.CA.Equal(ca) {
					t.Errorf("got %s %v", res.Server, res.CA.Subject)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want %q", err, tt.want)
			}
		})
	}
}
