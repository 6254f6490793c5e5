package certificates

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
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
	"k8s.io/client-go/util/certificate"

	"trireme.dev/componentbase/testpki"
)

// pair writes a client certificate for node n1 signed by ca, valid from
// two hours ago until notAfter, and its key, and returns their paths.
func pair(t *testing.T, ca *testpki.CA, dir string, notAfter time.Time) (string, string) {
	t.Helper()
	subject := ClientSubject("n1")
	p := ca.Issue(testpki.Cert{
		CommonName: subject.CommonName, Organization: subject.Organization, Usage: testpki.ClientAuth,
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: notAfter,
	})
	certFile, keyFile, err := p.Write(dir, "c")
	if err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestUsableKubeconfig(t *testing.T) {
	ca := testpki.NewCA("test-ca")
	dir := t.TempDir()
	validCert, validKey := pair(t, ca, t.TempDir(), time.Now().Add(time.Hour))
	expiredCert, expiredKey := pair(t, ca, t.TempDir(), time.Now().Add(-time.Hour))
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
	ca := testpki.NewCA("test-ca")
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
				csr.Status.Certificate = ca.Issue(testpki.Cert{
					CommonName: req.Subject.CommonName, Organization: req.Subject.Organization, Usage: testpki.ClientAuth,
					NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour), PublicKey: req.PublicKey,
				}).CertPEM
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
	ca := testpki.NewCA("test-ca")
	dir := t.TempDir()
	certDir := filepath.Join(dir, "pki")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := pair(t, ca, dir, time.Now().Add(time.Hour))
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
	if err := os.WriteFile(caFile, ca.CertPEM, 0o600); err != nil {
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
