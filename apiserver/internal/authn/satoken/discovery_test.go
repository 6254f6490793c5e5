package satoken

import (
	"crypto"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

func TestDiscovery(t *testing.T) {
	ec, rsa := mustKey(t, "ec"), mustKey(t, "rsa")
	d, err := NewDiscovery(testIssuer, "https://10.0.0.1:6443/openid/v1/jwks", []crypto.PublicKey{rsa.Public(), ec.Public(), rsa.Public()})
	if err != nil {
		t.Fatal(err)
	}

	rec := httptest.NewRecorder()
	d.ServeConfig(rec, httptest.NewRequest(http.MethodGet, DiscoveryPath, nil))
	var cfg map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &cfg); err != nil || rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("config: %d %q %s (%v)", rec.Code, rec.Header().Get("Content-Type"), rec.Body, err)
	}
	if cfg["issuer"] != testIssuer || cfg["jwks_uri"] != "https://10.0.0.1:6443/openid/v1/jwks" {
		t.Errorf("config = %v", cfg)
	}
	if algs, _ := json.Marshal(cfg["id_token_signing_alg_values_supported"]); string(algs) != `["ES256","RS256"]` {
		t.Errorf("algorithms = %s", algs)
	}

	rec = httptest.NewRecorder()
	d.ServeKeys(rec, httptest.NewRequest(http.MethodGet, JWKSPath, nil))
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(rec.Body.Bytes(), &set); err != nil || rec.Header().Get("Content-Type") != "application/jwk-set+json" {
		t.Fatalf("keys: %q %s (%v)", rec.Header().Get("Content-Type"), rec.Body, err)
	}
	if len(set.Keys) != 2 {
		t.Fatalf("key set has %d keys, want 2 (one per distinct key)", len(set.Keys))
	}

	// What a verifier outside the cluster does: pick the key by the
	// token's kid and check the signature.
	signer, err := NewSigner(testIssuer, ec)
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := signer.Sign(baseRequest())
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := jwt.ParseSigned(tok, allowedAlgorithms)
	if err != nil {
		t.Fatal(err)
	}
	keys := set.Key(parsed.Headers[0].KeyID)
	if len(keys) != 1 {
		t.Fatalf("no published key has the token's kid %q", parsed.Headers[0].KeyID)
	}
	var claims jwt.Claims
	if err := parsed.Claims(keys[0].Key, &claims); err != nil || claims.Issuer != testIssuer {
		t.Errorf("token verified with the published key: %v, issuer %q", err, claims.Issuer)
	}

	rec = httptest.NewRecorder()
	d.ServeKeys(rec, httptest.NewRequest(http.MethodPost, JWKSPath, nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST answered %d", rec.Code)
	}
}

func TestDiscoveryNeedsHTTPSIssuer(t *testing.T) {
	key := mustKey(t, "ec").Public()
	for _, issuer := range []string{"kubernetes/serviceaccount", "http://kubernetes.default.svc", "https://x.example/?a=b"} {
		if _, err := NewDiscovery(issuer, "https://10.0.0.1:6443/openid/v1/jwks", []crypto.PublicKey{key}); err == nil {
			t.Errorf("issuer %q accepted", issuer)
		}
	}
}
