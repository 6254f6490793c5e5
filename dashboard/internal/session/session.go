// Package session seals a user's bearer token into a cookie value with
// AES-256-GCM, so the token never travels or rests in clear in the browser.
package session

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// KeySize is the AES-256 key length.
const KeySize = 32

// ErrInvalid is returned for a cookie that was not sealed by this key, was
// altered, or has expired.
var ErrInvalid = errors.New("session is invalid or expired")

// Sealer seals and opens session values.
type Sealer struct {
	aead cipher.AEAD
	ttl  time.Duration
	now  func() time.Time
}

// NewKey returns a random key.
func NewKey() ([]byte, error) {
	k := make([]byte, KeySize)
	_, err := rand.Read(k)
	return k, err
}

// ReadKey reads a key from a file (a mounted Secret): 32 raw bytes, or
// their base64.
func ReadKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("session key: %w", err)
	}
	if len(b) == KeySize {
		return b, nil
	}
	d, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(d) != KeySize {
		return nil, fmt.Errorf("session key %s: want %d bytes, raw or base64", path, KeySize)
	}
	return d, nil
}

// New returns a Sealer whose sessions last ttl.
func New(key []byte, ttl time.Duration) (*Sealer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("session key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead, ttl: ttl, now: time.Now}, nil
}

// Seal returns the cookie value carrying token until the session expires.
func (s *Sealer) Seal(token string) (string, error) {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	plain := fmt.Sprintf("%d|%s", s.now().Add(s.ttl).Unix(), token)
	return base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, []byte(plain), nil)), nil
}

// Open returns the token a cookie value carries.
func (s *Sealer) Open(value string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(b) < s.aead.NonceSize() {
		return "", ErrInvalid
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, b[:n], b[n:], nil)
	if err != nil {
		return "", ErrInvalid
	}
	exp, token, ok := strings.Cut(string(plain), "|")
	if !ok {
		return "", ErrInvalid
	}
	var unix int64
	if _, err := fmt.Sscan(exp, &unix); err != nil || s.now().Unix() > unix {
		return "", ErrInvalid
	}
	return token, nil
}
