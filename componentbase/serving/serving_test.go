package serving

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/server/healthz"

	"trireme.dev/componentbase/processmetrics"
)

func TestHandler(t *testing.T) {
	failing := healthz.NamedCheck("leader", func(*http.Request) error { return errors.New("not renewed") })
	unsynced := healthz.NamedCheck("informer-sync", func(*http.Request) error { return errors.New("waiting") })
	tests := []struct {
		name     string
		e        Endpoints
		path     string
		wantCode int
		wantBody string
	}{
		{"healthz ok", Endpoints{}, "/healthz", http.StatusOK, "ok"},
		{"healthz fails with a failing check", Endpoints{Live: []healthz.HealthChecker{failing}}, "/healthz", http.StatusInternalServerError, "leader failed"},
		{"named check path", Endpoints{Live: []healthz.HealthChecker{failing}}, "/healthz/leader", http.StatusInternalServerError, "not renewed"},
		{"livez fails with a failing check", Endpoints{Live: []healthz.HealthChecker{failing}}, "/livez", http.StatusInternalServerError, "leader failed"},
		{"livez ignores readiness", Endpoints{Ready: []healthz.HealthChecker{unsynced}}, "/livez", http.StatusOK, "ok"},
		{"healthz ignores readiness", Endpoints{Ready: []healthz.HealthChecker{unsynced}}, "/healthz", http.StatusOK, "ok"},
		{"readyz waits for readiness", Endpoints{Ready: []healthz.HealthChecker{unsynced}}, "/readyz", http.StatusInternalServerError, "informer-sync failed"},
		{"readyz ok", Endpoints{}, "/readyz", http.StatusOK, "ok"},
		{"metrics in prometheus text", Endpoints{Metrics: processmetrics.NewRegistry()}, "/metrics", http.StatusOK, "go_goroutines"},
		{"process figures beside the runtime's", Endpoints{Metrics: processmetrics.NewRegistry()}, "/metrics", http.StatusOK, "process_resident_memory_bytes"},
		{"no metrics without a registry", Endpoints{}, "/metrics", http.StatusNotFound, ""},
		{"no profiles unless asked", Endpoints{}, "/debug/pprof/", http.StatusNotFound, ""},
		{"profiles", Endpoints{Profiling: true}, "/debug/pprof/", http.StatusOK, "goroutine"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Handler(tt.e).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
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
	h := withAuth(Handler(Endpoints{Metrics: processmetrics.NewRegistry(), Profiling: true}), authn, allowHealthAndScraper)
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

// TestStart serves over real HTTPS with a self-signed certificate, open to
// everyone (no delegation), and stops when the context ends.
func TestStart(t *testing.T) {
	o := NewOptions(0, "test")
	if addr, err := o.Start(context.Background(), Handler(Endpoints{})); err != nil || addr != "" {
		t.Fatalf("port 0: addr %q, err %v; want nothing served", addr, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.SecureServing.Listener = ln
	o.Authentication, o.Authorization = nil, nil
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := o.Start(ctx, Handler(Endpoints{}))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Get("https://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok" {
		t.Errorf("GET /readyz = %d %q", resp.StatusCode, body)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Options)
		wantErr bool
	}{
		{"defaults", func(*Options) {}, false},
		{"port out of range", func(o *Options) { o.SecureServing.BindPort = 70000 }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions(10259, "test")
			tt.mutate(o)
			if errs := o.Validate(); (len(errs) > 0) != tt.wantErr {
				t.Errorf("Validate = %v, want errors: %v", errs, tt.wantErr)
			}
		})
	}
}
