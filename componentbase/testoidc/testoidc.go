// Package testoidc is an OpenID Connect issuer for tests: its discovery
// document and signing key served over HTTPS, ID tokens signed with that
// key, and its certificate as the CA file an apiserver's --oidc-ca-file
// takes.
package testoidc

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

// keyID names the issuer's one key in its JWKS and its tokens' headers.
const keyID = "k1"

// Issuer is a running test issuer.
type Issuer struct {
	// URL is the issuer's URL, the iss of its tokens.
	URL string
	// CAFile holds the PEM certificate the issuer serves with.
	CAFile string
	key    *rsa.PrivateKey
}

// Start serves an issuer until the test ends.
func Start(tb testing.TB) *Issuer {
	tb.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		tb.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	var srv *httptest.Server
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": srv.URL, "jwks_uri": srv.URL + "/jwks",
				"id_token_signing_alg_values_supported": []string{"RS256"}})
		case "/jwks":
			_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
				"kty": "RSA", "kid": keyID, "alg": "RS256", "use": "sig",
				"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
			}}})
		default:
			http.NotFound(w, r)
		}
	}))
	tb.Cleanup(srv.Close)
	ca := filepath.Join(tb.TempDir(), "issuer-ca.crt")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		tb.Fatal(err)
	}
	return &Issuer{URL: srv.URL, CAFile: ca, key: key}
}

// Token returns claims as an ID token the issuer signed (RS256). The
// claims are the caller's: iss, aud and exp included.
func (i *Issuer) Token(tb testing.TB, claims map[string]any) string {
	tb.Helper()
	b64 := base64.RawURLEncoding.EncodeToString
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": keyID, "typ": "JWT"})
	payload, err := json.Marshal(claims)
	if err != nil {
		tb.Fatal(err)
	}
	signed := b64(header) + "." + b64(payload)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, i.key, crypto.SHA256, sum[:])
	if err != nil {
		tb.Fatal(err)
	}
	return signed + "." + b64(sig)
}
