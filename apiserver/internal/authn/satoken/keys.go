package satoken

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"fmt"

	"github.com/go-jose/go-jose/v4"
)

// allowedAlgorithms are the only signature algorithms a token may declare;
// anything else (notably "none" and HMAC) is refused before verification.
var allowedAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.ES384, jose.ES512}

// algorithmFor picks the signature algorithm a key signs with.
func algorithmFor(pub crypto.PublicKey) (jose.SignatureAlgorithm, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return jose.RS256, nil
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
		return "", fmt.Errorf("unsupported ECDSA curve %s", k.Curve.Params().Name)
	}
	return "", fmt.Errorf("unsupported public key type %T", pub)
}

// keyID derives a stable key ID from the public key so that verifiers with
// several keys (rotation) try the right one first, and so that published
// JWKS documents can name keys.
func keyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("marshal public key: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}
