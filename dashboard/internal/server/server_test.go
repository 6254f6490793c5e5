package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"trireme.dev/dashboard/internal/session"
)

const csrfValue = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// fakeAPI records the bearer token of each request and answers as an
// apiserver would.
type fakeAPI struct {
	mu     sync.Mutex
	tokens []string
	paths  []string
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.tokens = append(f.tokens, r.Header.Get("Authorization"))
	f.paths = append(f.paths, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Accept"))
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Header.Get("Authorization") != "Bearer good":
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`)
	case strings.HasSuffix(r.URL.Path, "/selfsubjectreviews"):
		_, _ = io.WriteString(w, `{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","status":{"userInfo":{"username":"alice"}}}`)
	case r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/deployments/bad"):
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Deployment.apps \"bad\" is invalid","reason":"Invalid","code":422,"details":{"causes":[{"reason":"FieldValueInvalid","message":"must be greater than or equal to 0","field":"spec.replicas"}]}}`)
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"forbidden","reason":"Forbidden","code":403}`)
	case strings.Contains(r.Header.Get("Accept"), "as=Table") && r.URL.Query().Get("watch") == "true":
		_, _ = io.WriteString(w, `{"type":"ADDED","object":`+tableWithManagedFields+"}\n")
	case strings.Contains(r.Header.Get("Accept"), "as=Table"):
		_, _ = io.WriteString(w, tableWithManagedFields)
	default:
		_, _ = io.WriteString(w, `{"kind":"PodList","apiVersion":"v1","items":[]}`)
	}
}

func newServer(t *testing.T) (*Server, *fakeAPI, *httptest.Server) {
	t.Helper()
	f := &fakeAPI{}
	api := httptest.NewServer(f)
	t.Cleanup(api.Close)
	key, _ := session.NewKey()
	sealer, err := session.New(key, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// The dashboard's own credentials must never be sent.
	s := &Server{API: &rest.Config{Host: api.URL, BearerToken: "dashboard-own"}, Sealer: sealer,
		Assets: fstest.MapFS{"index.html": {Data: []byte("<!doctype html>")}}, Log: logr.Discard()}
	return s, f, api
}

func do(t *testing.T, h http.Handler, method, path, body string, hdr map[string]string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, "https://dash.example"+path, strings.NewReader(body))
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	for _, c := range cookies {
		r.AddCookie(c)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func sessionCookie(t *testing.T, s *Server, token string) *http.Cookie {
	v, err := s.Sealer.Seal(token)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Cookie{Name: SessionCookie, Value: v}
}

func TestSecurityHeaders(t *testing.T) {
	s, _, _ := newServer(t)
	w := do(t, s.Handler(), "GET", "/", "", nil)
	for k, want := range map[string]string{
		"Content-Security-Policy": CSP,
		"X-Content-Type-Options":  "nosniff",
		"X-Frame-Options":         "DENY",
	} {
		if got := w.Header().Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if !strings.Contains(CSP, "default-src 'self'") || !strings.Contains(CSP, "frame-ancestors 'none'") || strings.Contains(CSP, "unsafe") {
		t.Errorf("CSP %q", CSP)
	}
	var csrf *http.Cookie
	for _, c := range w.Result().Cookies() {
		if c.Name == CSRFCookie {
			csrf = c
		}
	}
	if csrf == nil || len(csrf.Value) != 64 || !csrf.Secure || csrf.SameSite != http.SameSiteStrictMode {
		t.Errorf("CSRF cookie = %+v", csrf)
	}
}

func TestCSRF(t *testing.T) {
	s, f, _ := newServer(t)
	h := s.Handler()
	csrf := &http.Cookie{Name: CSRFCookie, Value: csrfValue}
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range form {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		hdr     map[string]string
		cookies []*http.Cookie
		want    int
	}{
		{"no token", form, []*http.Cookie{csrf}, http.StatusForbidden},
		{"no cookie", with(map[string]string{CSRFHeader: csrfValue}), nil, http.StatusForbidden},
		{"wrong token", with(map[string]string{CSRFHeader: strings.Repeat("f", 64)}), []*http.Cookie{csrf}, http.StatusForbidden},
		{"cross-site origin", with(map[string]string{CSRFHeader: csrfValue, "Origin": "https://evil.example"}), []*http.Cookie{csrf}, http.StatusForbidden},
		{"http origin", with(map[string]string{CSRFHeader: csrfValue, "Origin": "http://dash.example"}), []*http.Cookie{csrf}, http.StatusForbidden},
		{"same origin", with(map[string]string{CSRFHeader: csrfValue, "Origin": "https://dash.example"}), []*http.Cookie{csrf}, http.StatusOK},
		{"no origin", with(map[string]string{CSRFHeader: csrfValue}), []*http.Cookie{csrf}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := do(t, h, "POST", "/login", "token=good", tc.hdr, tc.cookies...)
			if w.Code != tc.want {
				t.Fatalf("POST /login = %d %s, want %d", w.Code, w.Body, tc.want)
			}
		})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.tokens) != 2 {
		t.Errorf("refused requests reached the apiserver: %d calls", len(f.tokens))
	}
}

func TestLogin(t *testing.T) {
	s, _, _ := newServer(t)
	h := s.Handler()
	csrf := &http.Cookie{Name: CSRFCookie, Value: csrfValue}
	hdr := map[string]string{"Content-Type": "application/x-www-form-urlencoded", CSRFHeader: csrfValue}
	t.Run("good token", func(t *testing.T) {
		w := do(t, h, "POST", "/login", "token=good", hdr, csrf)
		if w.Code != http.StatusOK {
			t.Fatalf("= %d %s", w.Code, w.Body)
		}
		var c *http.Cookie
		for _, x := range w.Result().Cookies() {
			if x.Name == SessionCookie {
				c = x
			}
		}
		if c == nil || !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteStrictMode || strings.Contains(c.Value, "good") {
			t.Fatalf("session cookie = %+v", c)
		}
		if tok, err := s.Sealer.Open(c.Value); err != nil || tok != "good" {
			t.Fatalf("cookie opens to %q, %v", tok, err)
		}
	})
	t.Run("wrong token", func(t *testing.T) {
		w := do(t, h, "POST", "/login", "token=bad", hdr, csrf)
		if w.Code != http.StatusUnauthorized || len(w.Result().Cookies()) != 0 {
			t.Fatalf("= %d %v", w.Code, w.Result().Cookies())
		}
	})
	t.Run("expired session", func(t *testing.T) {
		w := do(t, h, "GET", "/api/session", "", nil, &http.Cookie{Name: SessionCookie, Value: "stale"})
		if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "sign in again") {
			t.Fatalf("= %d %s", w.Code, w.Body)
		}
	})
}

func TestProxyAsUser(t *testing.T) {
	s, f, _ := newServer(t)
	h := s.Handler()
	user := sessionCookie(t, s, "good")
	for _, tc := range []struct {
		name, path string
		want       int
		upstream   string
	}{
		{"list", "/api/k8s/api/v1/pods?limit=5&continue=x&watch=true", 200, "GET /api/v1/pods?continue=x&limit=5 application/json"},
		{"table", "/api/k8s/apis/apps/v1/deployments?as=table", 200, "GET /apis/apps/v1/deployments " + tableAccept},
		{"not an API path", "/api/k8s/metrics", 404, ""},
		{"escape is cleaned first", "/api/k8s/api/../metrics", 307, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.mu.Lock()
			f.paths, f.tokens = nil, nil
			f.mu.Unlock()
			w := do(t, h, "GET", tc.path, "", nil, user)
			if w.Code != tc.want {
				t.Fatalf("= %d %s, want %d", w.Code, w.Body, tc.want)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if tc.upstream == "" {
				if len(f.paths) != 0 {
					t.Fatalf("reached the apiserver: %v", f.paths)
				}
				return
			}
			if len(f.paths) != 1 || f.paths[0] != tc.upstream {
				t.Fatalf("apiserver saw %q, want %q", f.paths, tc.upstream)
			}
			if f.tokens[0] != "Bearer good" {
				t.Fatalf("apiserver saw credentials %q, want the user's", f.tokens[0])
			}
		})
	}
	t.Run("no session", func(t *testing.T) {
		if w := do(t, h, "GET", "/api/k8s/api/v1/pods", "", nil); w.Code != http.StatusUnauthorized {
			t.Fatalf("= %d", w.Code)
		}
	})
}

func TestActionErrors(t *testing.T) {
	s, f, _ := newServer(t)
	h := s.Handler()
	cookies := []*http.Cookie{sessionCookie(t, s, "good"), {Name: CSRFCookie, Value: csrfValue}}
	hdr := map[string]string{CSRFHeader: csrfValue, "Content-Type": "application/json"}
	for _, tc := range []struct {
		name, verb, body string
		code             int
		reason           metav1.StatusReason
		field, upstream  string
	}{
		{"invalid keeps field causes", "scale", `{"path":"/apis/apps/v1/namespaces/d/deployments/bad","replicas":3}`, 422, metav1.StatusReasonInvalid, "spec.replicas", "PATCH /apis/apps/v1/namespaces/d/deployments/bad/scale"},
		{"forbidden", "delete", `{"path":"/api/v1/namespaces/d/pods/p"}`, 403, metav1.StatusReasonForbidden, "", "DELETE /api/v1/namespaces/d/pods/p"},
		{"restart", "restart", `{"path":"/apis/apps/v1/namespaces/d/deployments/web"}`, 200, "", "", "PATCH /apis/apps/v1/namespaces/d/deployments/web"},
		{"dry-run apply", "apply", `{"path":"/apis/apps/v1/namespaces/d/deployments/web","body":"kind: Deployment","dryRun":true}`, 200, "", "", "PATCH /apis/apps/v1/namespaces/d/deployments/web?dryRun=All&fieldManager=trireme-dashboard&force=true"},
		{"negative replicas", "scale", `{"path":"/apis/apps/v1/namespaces/d/deployments/web","replicas":-1}`, 400, metav1.StatusReasonBadRequest, "", ""},
		{"unknown action", "exec", `{"path":"/api/v1/namespaces/d/pods/p"}`, 404, metav1.StatusReasonNotFound, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.mu.Lock()
			f.paths = nil
			f.mu.Unlock()
			w := do(t, h, "POST", "/api/action/"+tc.verb, tc.body, hdr, cookies...)
			if w.Code != tc.code {
				t.Fatalf("= %d %s, want %d", w.Code, w.Body, tc.code)
			}
			if tc.reason != "" {
				var st metav1.Status
				if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
					t.Fatal(err)
				}
				if st.Reason != tc.reason {
					t.Fatalf("reason = %q, want %q (%s)", st.Reason, tc.reason, w.Body)
				}
				if tc.field != "" && (st.Details == nil || len(st.Details.Causes) == 0 || st.Details.Causes[0].Field != tc.field) {
					t.Fatalf("causes = %+v, want field %s", st.Details, tc.field)
				}
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if tc.upstream == "" {
				if len(f.paths) != 0 {
					t.Fatalf("reached the apiserver: %v", f.paths)
				}
				return
			}
			if len(f.paths) != 1 || !strings.HasPrefix(f.paths[0], tc.upstream+" ") {
				t.Fatalf("apiserver saw %q, want %q", f.paths, tc.upstream)
			}
		})
	}
}
