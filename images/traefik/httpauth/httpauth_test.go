package auth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestChallenge(t *testing.T) {
	da := NewDigestAuthenticator("traefik", func(user, realm string) string { return "" })
	for _, tc := range []struct {
		name      string
		require   func(http.ResponseWriter, *http.Request)
		wantStale bool
	}{
		{"RequireAuth", da.RequireAuth, false},
		{"RequireAuthStale", da.RequireAuthStale, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			tc.require(rec, httptest.NewRequest(http.MethodGet, "/", nil))
			challenge := rec.Header().Get("WWW-Authenticate")
			if rec.Code != http.StatusUnauthorized || !strings.HasPrefix(challenge, `Digest realm="traefik", nonce="`) {
				t.Fatalf("%d %q, want 401 and a Digest challenge", rec.Code, challenge)
			}
			if stale := strings.HasSuffix(challenge, ", stale=true"); stale != tc.wantStale {
				t.Errorf("challenge %q: stale %v, want %v", challenge, stale, tc.wantStale)
			}
			if strings.Count(challenge, "stale") > 1 {
				t.Errorf("challenge %q marks stale twice", challenge)
			}
		})
	}
}
