package authn

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/util/keyutil"
)

// EnsureServiceAccountKey points an unset --service-account-signing-key-file
// at <pkiDir>/sa.key, creating that RSA key and its public half sa.pub on
// first start so that dev clusters get working service-account tokens, and
// keep them valid across restarts.
func (o *Options) EnsureServiceAccountKey(pkiDir string) error {
	if o.ServiceAccounts.SigningKeyFile != "" {
		return nil
	}
	keyFile, pubFile := filepath.Join(pkiDir, "sa.key"), filepath.Join(pkiDir, "sa.pub")
	o.ServiceAccounts.SigningKeyFile = keyFile
	if _, err := os.Stat(keyFile); err == nil {
		return nil
	}
	if err := os.MkdirAll(pkiDir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", pkiDir, err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generate service account key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("marshal service account key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return fmt.Errorf("marshal service account public key: %w", err)
	}
	// The public key first: a crash between the two leaves no key file, so
	// the next start generates a consistent pair again.
	if err := keyutil.WriteKey(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})); err != nil {
		return fmt.Errorf("write %s: %w", pubFile, err)
	}
	if err := keyutil.WriteKey(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})); err != nil {
		return fmt.Errorf("write %s: %w", keyFile, err)
	}
	return nil
}
