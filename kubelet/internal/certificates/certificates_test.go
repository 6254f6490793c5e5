package certificates

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/keyutil"
)

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "test-ca"}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key}
}

// sign issues a certificate for pub valid from notBefore to notAfter.
func (c *testCA) sign(t *testing.T, subject pkix.Name, pub any, notBefore, notAfter time.Time) []byte {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: subject,
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, pub, c.key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// pair writes a key and a certificate signed by c and returns their paths.
func (c *testCA) pair(t *testing.T, dir string, notAfter time.Time) (string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := c.sign(t, ClientSubject("n1"), &key.PublicKey, time.Now().Add(-2*time.Hour), notAfter)
	certFile, keyFile := filepath.Join(dir, "c.crt"), filepath.Join(dir, "c.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestUsableKubeconfig(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	validCert, validKey := ca.pair(t, t.TempDir(), time.Now().Add(time.Hour))
	expiredCert, expiredKey := ca.pair(t, t.TempDir(), time.Now().Add(-time.Hour))
	write := func(name string, cfg *rest.Config) string {
		path := filepath.Join(dir, name)
		if err := WriteKubeconfig(path, cfg, ""); err != nil {
			t.Fatal(err)
		}
		loaded, err := clientcmd.LoadFromFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ai := loaded.AuthInfos["default-auth"]
		ai.ClientCertificate, ai.ClientKey, ai.Token = cfg.CertFile, cfg.KeyFile, cfg.BearerToken
		if err := clientcmd.WriteToFile(*loaded, path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name string
		path string
		want bool
	}{
		{"missing", filepath.Join(dir, "nope"), false},
		{"token", write("token", &rest.Config{Host: "https://127.0.0.1:1", BearerToken: "abc"}), true},
		{"valid certificate", write("valid", &rest.Config{Host: "https://127.0.0.1:1", TLSClientConfig: rest.TLSClientConfig{CertFile: validCert, KeyFile: validKey}}), true},
		{"expired certificate", write("expired", &rest.Config{Host: "https://127.0.0.1:1", TLSClientConfig: rest.TLSClientConfig{CertFile: expiredCert, KeyFile: expiredKey}}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := usableKubeconfig(tt.path)
			if got != tt.want {
				t.Fatalf("usableKubeconfig = %v (%s), want %v", got, reason, tt.want)
			}
		})
	}
}

// TestRequestClientCertificate runs the bootstrap request against a fake
// clientset whose "controller-manager" approves and signs the CSR.
func TestRequestClientCertificate(t *testing.T) {
	ca := newTestCA(t)
	client := fake.NewClientset()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	certDir := t.TempDir()
	store, err := certificate.NewFileStore(ClientPairName, certDir, certDir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	signed := make(chan *certificatesv1.CertificateSigningRequest, 1)
	go func() {
		for ctx.Err() == nil {
			list, err := client.CertificatesV1().CertificateSigningRequests().List(ctx, metav1.ListOptions{})
			if err == nil && len(list.Items) > 0 {
				csr := list.Items[0].DeepCopy()
				block, _ := pem.Decode(csr.Spec.Request)
				req, err := x509.ParseCertificateRequest(block.Bytes)
				if err != nil {
					t.Errorf("parse request: %v", err)
					return
				}
				csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
					Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test"})
				csr.Status.Certificate = ca.sign(t, req.Subject, req.PublicKey, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
				if _, err := client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{}); err != nil {
					t.Errorf("update status: %v", err)
				}
				signed <- csr
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	path, err := requestClientCertificate(ctx, client, store, certDir, "n1", 15*time.Second, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	csr := <-signed
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
		t.Errorf("signer = %q", csr.Spec.SignerName)
	}
	if !slices.Equal(csr.Spec.Usages, ClientUsages) {
		t.Errorf("usages = %v", csr.Spec.Usages)
	}
	if path != store.CurrentPath() {
		t.Errorf("path = %q, want %q", path, store.CurrentPath())
	}
	cur, err := store.Current()
	if err != nil {
		t.Fatal(err)
	}
	if cur.Leaf.Subject.CommonName != "system:node:n1" || !slices.Equal(cur.Leaf.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("subject = %v", cur.Leaf.Subject)
	}
	if _, err := os.Stat(filepath.Join(certDir, ClientPairName+".key.tmp")); !os.IsNotExist(err) {
		t.Errorf("bootstrap key left behind: %v", err)
	}
}

// TestBootstrapReusesStoredCertificate: a valid pair in the cert dir is
// used without asking the apiserver (which is unreachable here).
func TestBootstrapReusesStoredCertificate(t *testing.T) {
	ca := newTestCA(t)
	dir := t.TempDir()
	certDir := filepath.Join(dir, "pki")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := ca.pair(t, dir, time.Now().Add(time.Hour))
	store, err := certificate.NewFileStore(ClientPairName, certDir, certDir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, _ := os.ReadFile(certFile)
	keyPEM, _ := os.ReadFile(keyFile)
	if _, err := store.Update(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	bootstrap := filepath.Join(dir, "bootstrap.conf")
	if err := WriteKubeconfig(bootstrap, &rest.Config{Host: "https://127.0.0.1:1", TLSClientConfig: rest.TLSClientConfig{CAFile: caFile}}, ""); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubelet.conf")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := Bootstrap(ctx, kubeconfig, bootstrap, certDir, "n1", time.Second, logr.Discard()); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CertFile != store.CurrentPath() || cfg.Host != "https://127.0.0.1:1" || len(cfg.CAData) == 0 {
		t.Errorf("kubeconfig = cert %q host %q ca %d bytes", cfg.CertFile, cfg.Host, len(cfg.CAData))
	}
	if ok, reason := usableKubeconfig(kubeconfig); !ok {
		t.Errorf("written kubeconfig not usable: %s", reason)
	}
}

func TestRequestNameStable(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	a, b := requestName(key, ClientSubject("n1")), requestName(key, ClientSubject("n1"))
	if a != b {
		t.Errorf("names differ: %q %q", a, b)
	}
	if c := requestName(key, ClientSubject("n2")); c == a {
		t.Errorf("another node gets the same name %q", c)
	}
}
