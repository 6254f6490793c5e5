package certexpiry

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
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"trireme.dev/controller-manager/internal/metrics"
)

func writeCert(t *testing.T, path string, notAfter time.Time) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "x"}, NotBefore: notAfter.Add(-time.Hour * 24 * 400), NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	writeCert(t, filepath.Join(dir, "ca.crt"), now.Add(9*365*24*time.Hour))
	writeCert(t, filepath.Join(dir, "apiserver.crt"), now.Add(10*24*time.Hour))
	writeCert(t, filepath.Join(dir, "etcd/server.crt"), now.Add(-time.Hour))
	writeCert(t, filepath.Join(dir, "front-proxy-client.crt"), now.Add(31*24*time.Hour))
	os.WriteFile(filepath.Join(dir, "sa.pub"), []byte("not a certificate"), 0o644)
	os.WriteFile(filepath.Join(dir, "broken.crt"), []byte("junk"), 0o644)

	client := fake.NewClientset()
	w := &Watcher{Dir: dir, Node: "cp-1", Warn: 30 * 24 * time.Hour, Client: client, Now: func() time.Time { return now }}
	for _, tc := range []struct {
		name    string
		advance time.Duration
		events  int
	}{
		{"first check warns of the two within 30 days", 0, 2},
		{"an hour later: no repeat", time.Hour, 2},
		{"a day later: again, and front-proxy-client now within 30 days", 24 * time.Hour, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now = now.Add(tc.advance)
			if err := w.Check(context.Background()); err != nil {
				t.Fatal(err)
			}
			list, _ := client.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
			if len(list.Items) != tc.events {
				t.Fatalf("%d events, want %d: %v", len(list.Items), tc.events, list.Items)
			}
			for _, e := range list.Items {
				if e.Type != "Warning" || e.Reason != Reason || e.InvolvedObject.Kind != "Node" || e.InvolvedObject.Name != "cp-1" ||
					!strings.Contains(e.Message, "triremeadm certs renew all") {
					t.Errorf("event %+v", e)
				}
			}
		})
	}
	if got := testutil.ToFloat64(metrics.CertificateExpiration.WithLabelValues("etcd/server")); got != float64(now.Add(-26*time.Hour).Unix()) {
		t.Errorf("etcd/server gauge %v", got)
	}
	if n := testutil.CollectAndCount(metrics.CertificateExpiration); n != 4 {
		t.Errorf("%d certificates in the gauge, want 4", n)
	}
}
