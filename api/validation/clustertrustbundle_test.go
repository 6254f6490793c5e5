package validation

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// testCert returns a self-signed PEM certificate, a CA when ca is set.
func testCert(t *testing.T, cn string, ca bool) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour),
		BasicConstraintsValid: true, IsCA: ca, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestClusterTrustBundle(t *testing.T) {
	caA, caB, leaf := testCert(t, "a", true), testCert(t, "b", true), testCert(t, "leaf", false)
	valid := func() *certificatesv1.ClusterTrustBundle {
		return &certificatesv1.ClusterTrustBundle{ObjectMeta: clusterMeta("example.com:foo:abc"),
			Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/foo", TrustBundle: caA + caB}}
	}
	cases := []struct {
		name   string
		mutate func(c *certificatesv1.ClusterTrustBundle)
		want   []want
	}{
		{"valid", func(c *certificatesv1.ClusterTrustBundle) {}, nil},
		{"no signer, plain name", func(c *certificatesv1.ClusterTrustBundle) { c.Name, c.Spec.SignerName = "team-roots", "" }, nil},
		{"no signer, colon in name", func(c *certificatesv1.ClusterTrustBundle) { c.Spec.SignerName = "" }, []want{invalid("metadata.name")}},
		{"signer without name prefix", func(c *certificatesv1.ClusterTrustBundle) { c.Name = "abc" }, []want{invalid("metadata.name")}},
		{"bad signer", func(c *certificatesv1.ClusterTrustBundle) {
			c.Name, c.Spec.SignerName = "example.com:abc", "example.com"
		}, []want{invalid("spec.signerName")}},
		{"empty bundle", func(c *certificatesv1.ClusterTrustBundle) { c.Spec.TrustBundle = "" }, []want{invalid("spec.trustBundle")}},
		{"not a CA", func(c *certificatesv1.ClusterTrustBundle) { c.Spec.TrustBundle = caA + leaf }, []want{invalid("spec.trustBundle")}},
		{"duplicate anchor", func(c *certificatesv1.ClusterTrustBundle) { c.Spec.TrustBundle = caA + caA }, []want{invalid("spec.trustBundle")}},
		{"junk", func(c *certificatesv1.ClusterTrustBundle) { c.Spec.TrustBundle = caA + "junk" }, []want{invalid("spec.trustBundle")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.mutate(c)
			expectErrs(t, ValidateCreate(c), tc.want...)
		})
	}
	t.Run("signer is immutable", func(t *testing.T) {
		old := valid()
		stored(&old.ObjectMeta)
		c := old.DeepCopy()
		c.Spec.SignerName = "example.com/bar"
		c.Name = "example.com:foo:abc"
		expectErrs(t, ValidateUpdate(c, old), invalid("metadata.name"), invalid("spec.signerName"))
	})
}
