package satoken

import (
	"crypto"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// Request describes the token to issue.
type Request struct {
	// Namespace, Name and UID identify the service account.
	Namespace, Name, UID string
	// Audiences are the token's intended recipients; at least one.
	Audiences []string
	// Lifetime is how long the token is valid from now.
	Lifetime time.Duration
	// Pod, Secret and Node, when set, bind the token to that object.
	Pod, Secret, Node *ObjectRef
}

// Signer issues service-account tokens under one issuer with one key.
type Signer struct {
	issuer string
	signer jose.Signer
	now    func() time.Time
}

// NewSigner returns a signer for issuer using key (RSA or ECDSA).
func NewSigner(issuer string, key crypto.Signer) (*Signer, error) {
	if issuer == "" {
		return nil, fmt.Errorf("service account issuer must not be empty")
	}
	alg, err := algorithmFor(key.Public())
	if err != nil {
		return nil, err
	}
	kid, err := keyID(key.Public())
	if err != nil {
		return nil, err
	}
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader(jose.HeaderKey("kid"), kid)
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		return nil, fmt.Errorf("create token signer: %w", err)
	}
	return &Signer{issuer: issuer, signer: s, now: time.Now}, nil
}

// Issuer is the iss claim of every token this signer issues.
func (s *Signer) Issuer() string { return s.issuer }

// Sign issues a token for r and returns it with its expiry.
func (s *Signer) Sign(r Request) (string, time.Time, error) {
	if r.Namespace == "" || r.Name == "" || r.UID == "" {
		return "", time.Time{}, fmt.Errorf("service account namespace, name and uid are required")
	}
	if len(r.Audiences) == 0 {
		return "", time.Time{}, fmt.Errorf("at least one audience is required")
	}
	if r.Lifetime <= 0 {
		return "", time.Time{}, fmt.Errorf("token lifetime must be positive")
	}
	now := s.now().Truncate(time.Second)
	exp := now.Add(r.Lifetime)
	claims := tokenClaims{
		Claims: jwt.Claims{
			Issuer:    s.issuer,
			Subject:   Subject(r.Namespace, r.Name),
			Audience:  jwt.Audience(r.Audiences),
			Expiry:    jwt.NewNumericDate(exp),
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ID:        string(uuid.NewUUID()),
		},
		privateClaims: privateClaims{Kubernetes: &kubernetesClaims{
			Namespace:      r.Namespace,
			ServiceAccount: ObjectRef{Name: r.Name, UID: r.UID},
			Pod:            r.Pod,
			Secret:         r.Secret,
			Node:           r.Node,
		}},
	}
	tok, err := jwt.Signed(s.signer).Claims(claims).Serialize()
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign token: %w", err)
	}
	return tok, exp, nil
}
