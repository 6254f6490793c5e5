// Package auth stands in for github.com/abbot/go-http-auth as Traefik's
// go.mod replaces it: with Containous's fork, which the module proxy does
// not serve. It is upstream's package (the newest served version) with the
// one method Traefik needs beyond it, DigestAuth.RequireAuthStale.
package auth

import (
	"net/http"
	"strings"

	upstream "trireme.dev/images/traefik/upstream-http-auth"
)

// BasicAuth is upstream's HTTP Basic authenticator.
type BasicAuth = upstream.BasicAuth

// SecretProvider is upstream's lookup of a user's secret in a realm.
type SecretProvider = upstream.SecretProvider

// CheckSecret is upstream's check of a password against an htpasswd secret.
func CheckSecret(password, secret string) bool { return upstream.CheckSecret(password, secret) }

// DigestAuthParams is upstream's parser of a Digest Authorization header.
func DigestAuthParams(authorization string) map[string]string {
	return upstream.DigestAuthParams(authorization)
}

// DigestAuth is upstream's HTTP Digest authenticator with RequireAuthStale.
type DigestAuth struct {
	*upstream.DigestAuth
}

// NewDigestAuthenticator is upstream's constructor.
func NewDigestAuthenticator(realm string, secrets SecretProvider) *DigestAuth {
	return &DigestAuth{upstream.NewDigestAuthenticator(realm, secrets)}
}

// RequireAuthStale answers as RequireAuth does, with a fresh nonce, and
// marks the challenge stale (RFC 7616 section 3.3): the client's nonce
// expired but its credentials were right, so it retries without asking its
// user again.
func (da *DigestAuth) RequireAuthStale(w http.ResponseWriter, r *http.Request) {
	da.RequireAuth(&staleWriter{ResponseWriter: w}, r)
}

// staleWriter adds stale=true to the Digest challenge just before the
// status line goes out.
type staleWriter struct {
	http.ResponseWriter
	wrote bool
}

func (s *staleWriter) WriteHeader(code int) {
	if !s.wrote {
		s.wrote = true
		h := s.Header()
		for _, name := range []string{"WWW-Authenticate", "Proxy-Authenticate"} {
			if v := h.Get(name); strings.HasPrefix(v, "Digest ") {
				h.Set(name, v+", stale=true")
			}
		}
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *staleWriter) Write(b []byte) (int, error) {
	if !s.wrote {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}
