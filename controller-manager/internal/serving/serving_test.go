package serving

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
