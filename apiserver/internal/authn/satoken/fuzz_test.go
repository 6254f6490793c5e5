package satoken

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"testing"
)

// FuzzAuthenticateToken feeds arbitrary bearer tokens to the verifier: it
// must never panic and never accept a token it did not sign, so a bad
// credential always ends as a 401.
func FuzzAuthenticateToken(f *testing.F) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	s, err := NewSigner(testIssuer, key)
	if err != nil {
		f.Fatal(err)
	}
	valid, _, err := s.Sign(baseRequest())
	if err != nil {
		f.Fatal(err)
	}
	v, err := NewVerifier([]string{testIssuer}, []crypto.PublicKey{key.Public()}, []string{testIssuer}, newObjects())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(tamperPayload(valid))
	f.Add("")
	f.Add("a.b.c")
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Add("abcdef.0123456789abcdef")
	f.Fuzz(func(t *testing.T, tok string) {
		resp, ok, err := v.AuthenticateToken(context.Background(), tok)
		if ok && tok != valid {
			t.Fatalf("accepted a token it did not issue: %q", tok)
		}
		if ok && (err != nil || resp == nil) {
			t.Fatalf("ok with err=%v resp=%v", err, resp)
		}
	})
}
