package serving

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/server/healthz"
)

func TestHandler(t *testing.T) {
	failing := healthz.NamedCheck("leader", func(*http.Request) error { return errors.New("not renewed") })
	tests := []struct {
		name     string
		checks   []healthz.HealthChecker
		path     string
		wantCode int
		wantBody string
	}{
		{"healthz ok", nil, "/healthz", http.StatusOK, "ok"},
		{"healthz fails with a failing check", []healthz.HealthChecker{failing}, "/healthz", http.StatusInternalServerError, "leader failed"},
		{"named check path", []healthz.HealthChecker{failing}, "/healthz/leader", http.StatusInternalServerError, "not renewed"},
		{"metrics in prometheus text", nil, "/metrics", http.StatusOK, "go_goroutines"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Handler(tt.checks...).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			if rec.Code != tt.wantCode || !strings.Contains(rec.Body.String(), tt.wantBody) {
				t.Errorf("GET %s = %d %q, want %d containing %q", tt.path, rec.Code, rec.Body.String(), tt.wantCode, tt.wantBody)
			}
		})
	}
}

// tokenAuthn knows one bearer token, of user "scraper"; any other token
// fails and no token is no opinion.
type tokenAuthn struct{}

func (tokenAuthn) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	switch r.Header.Get("Authorization") {
	case "":
		return nil, false, nil
	case "Bearer good":
		return &authenticator.Response{User: &user.DefaultInfo{Name: "scraper"}}, true, nil
	}
	return nil, false, errors.New("invalid bearer token")
}

// allowHealthAndScraper allows /healthz to anyone and `get /metrics` to
// "scraper", as the apiserver's RBAC would after a grant.
var allowHealthAndScraper = authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if strings.HasPrefix(a.GetPath(), "/healthz") {
		return authorizer.DecisionAllow, "", nil
	}
	if a.GetUser().GetName() == "scraper" && a.GetVerb() == "get" && a.GetPath() == "/metrics" && !a.IsResourceRequest() {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
})

func TestWithAuth(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		token    string
		wantCode int
	}{
		{"health open to anonymous", "/healthz", "", http.StatusOK},
		{"metrics refused to anonymous", "/metrics", "", http.StatusForbidden},
		{"bad token unauthorized", "/metrics", "bad", http.StatusUnauthorized},
		{"granted identity reads metrics", "/metrics", "good", http.StatusOK},
		{"granted identity has no profiles", "/debug/pprof/", "good", http.StatusForbidden},
	}
	// As the delegating authenticator: no credentials is anonymous, bad
	// ones fail.
	authn := union.NewFailOnError(tokenAuthn{}, anonymous.NewAuthenticator(nil))
	h := withAuth(WithProfiling(Handler()), authn, allowHealthAndScraper)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tt.path, nil)
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.wantCode {
				t.Errorf("GET %s = %d %q, want %d", tt.path, rec.Code, rec.Body.String(), tt.wantCode)
			}
		})
	}
}
