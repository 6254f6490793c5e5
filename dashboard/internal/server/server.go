// Package server is the console's HTTP handler: sign-in, the page, and a
// narrow JSON API that calls the apiserver as the signed-in user only.
package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"trireme.dev/dashboard/internal/session"
)

const (
	// SessionCookie carries the sealed token.
	SessionCookie = "trireme-session"
	// CSRFCookie and CSRFHeader are the double-submit pair every
	// state-changing request must carry.
	CSRFCookie = "trireme-csrf"
	CSRFHeader = "X-CSRF-Token"
	// CSP allows nothing but the dashboard's own files.
	CSP = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
	// tableAccept asks the apiserver for its server-side printer columns.
	tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
)

// Server serves the console.
type Server struct {
	// API names the apiserver and its CA; it must hold no credentials.
	API    *rest.Config
	Sealer *session.Sealer
	// Assets are the page's files.
	Assets fs.FS
	Log    logr.Logger
	// Exec opens the terminal's pods/exec streams; nil: the apiserver's,
	// over WebSocket with SPDY as the fallback, as kubectl does.
	Exec ExecutorFunc
}

// Handler returns the console's routes behind the security headers.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /", s.page())
	mux.HandleFunc("POST /login", s.csrf(s.login))
	mux.HandleFunc("POST /logout", s.csrf(s.logout))
	mux.HandleFunc("GET /api/session", s.user(s.whoami))
	mux.HandleFunc("GET /api/k8s/", s.user(s.get))
	mux.HandleFunc("GET /api/watch/", s.user(s.watch))
	mux.HandleFunc("GET /api/logs/{namespace}/{pod}", s.user(s.logs))
	mux.HandleFunc("POST /api/can-i", s.csrf(s.user(s.canI)))
	mux.HandleFunc("POST /api/action/{verb}", s.csrf(s.user(s.action)))
	mux.HandleFunc("GET /api/exec/{namespace}/{pod}", terminalGuard(s.user(s.terminal)))
	return headers(mux)
}

func headers(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", CSP)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// page serves the embedded files and hands out the CSRF cookie.
func (s *Server) page() http.Handler {
	files := http.FileServerFS(s.Assets)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie(CSRFCookie); err != nil || len(c.Value) != 64 {
			b := make([]byte, 32)
			_, _ = rand.Read(b)
			http.SetCookie(w, &http.Cookie{Name: CSRFCookie, Value: hex.EncodeToString(b), Path: "/", Secure: true, SameSite: http.SameSiteStrictMode})
		}
		files.ServeHTTP(w, r)
	})
}

// csrf refuses a state-changing request unless its header repeats the
// CSRF cookie (which another site can neither read nor set) and its
// Origin, when sent, is this host.
func (s *Server) csrf(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
			writeStatus(w, http.StatusForbidden, "cross-origin request refused")
			return
		}
		h := r.Header.Get(CSRFHeader)
		if h == "" {
			h = r.PostFormValue("csrf")
		}
		if !csrfMatches(r, h) {
			writeStatus(w, http.StatusForbidden, "missing or wrong CSRF token")
			return
		}
		next(w, r)
	}
}

// csrfMatches reports whether token repeats the request's CSRF cookie.
func csrfMatches(r *http.Request, token string) bool {
	c, err := r.Cookie(CSRFCookie)
	return err == nil && c.Value != "" && subtle.ConstantTimeCompare([]byte(c.Value), []byte(token)) == 1
}

func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Scheme == "https" && u.Host == host
}

type userKey struct{}

// user opens the session cookie and puts a client acting as its user in
// the request context; without one the answer is 401 and the reason.
func (s *Server) user(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(SessionCookie)
		if err != nil {
			writeStatus(w, http.StatusUnauthorized, "not signed in")
			return
		}
		token, err := s.Sealer.Open(c.Value)
		if err != nil {
			clearSession(w)
			writeStatus(w, http.StatusUnauthorized, "session expired, sign in again")
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), userKey{}, s.asUser(token))))
	}
}

// asUser is the apiserver as the holder of token sees it: the dashboard's
// own identity is never used.
func (s *Server) asUser(token string) *rest.Config {
	c := rest.AnonymousClientConfig(s.API)
	c.BearerToken = token
	c.QPS, c.Burst = -1, 0
	return c
}

func userConfig(r *http.Request) *rest.Config { return r.Context().Value(userKey{}).(*rest.Config) }

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimSpace(r.PostFormValue("token"))
	if token == "" {
		writeStatus(w, http.StatusBadRequest, "a token is required")
		return
	}
	ssr, err := s.review(r.Context(), s.asUser(token))
	if err != nil {
		writeError(w, err)
		return
	}
	v, err := s.Sealer.Seal(token)
	if err != nil {
		writeError(w, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: v, Path: "/", HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode})
	s.Log.Info("Signed in", "user", ssr.Status.UserInfo.Username)
	writeJSON(w, http.StatusOK, ssr.Status.UserInfo)
}

func (s *Server) review(ctx context.Context, c *rest.Config) (*authenticationv1.SelfSubjectReview, error) {
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, err
	}
	return cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
}

func (s *Server) logout(w http.ResponseWriter, _ *http.Request) {
	clearSession(w)
	w.WriteHeader(http.StatusNoContent)
}

func clearSession(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: true, SameSite: http.SameSiteStrictMode})
}

func (s *Server) whoami(w http.ResponseWriter, r *http.Request) {
	ssr, err := s.review(r.Context(), userConfig(r))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ssr.Status.UserInfo)
}

// apiPath returns the apiserver path a console path names, only under
// /api and /apis.
func apiPath(p, prefix string) (string, bool) {
	rest := "/" + strings.TrimPrefix(p, prefix)
	if strings.Contains(rest, "..") || !(strings.HasPrefix(rest, "/api/") || strings.HasPrefix(rest, "/apis/") || rest == "/api" || rest == "/apis") {
		return "", false
	}
	return rest, true
}

// forwardQuery keeps the list parameters the console uses.
func forwardQuery(q url.Values, watch bool) url.Values {
	out := url.Values{}
	for _, k := range []string{"limit", "continue", "labelSelector", "fieldSelector", "resourceVersion", "includeObject"} {
		if v := q.Get(k); v != "" {
			out.Set(k, v)
		}
	}
	if watch {
		out.Set("watch", "true")
		out.Set("allowWatchBookmarks", "true")
	}
	return out
}

// get passes a GET (one object, a list, discovery) through as the user,
// as a server-side Table when ?as=table.
func (s *Server) get(w http.ResponseWriter, r *http.Request) {
	p, ok := apiPath(r.URL.Path, "/api/k8s/")
	if !ok {
		writeStatus(w, http.StatusNotFound, "not an API path")
		return
	}
	s.relay(w, r, p, forwardQuery(r.URL.Query(), false), r.URL.Query().Get("as") == "table", nil)
}

// relay sends the request as the user and copies the answer, flushing
// each chunk when flush is set (watches, logs).
func (s *Server) relay(w http.ResponseWriter, r *http.Request, path string, q url.Values, table bool, each func([]byte) []byte) {
	c := userConfig(r)
	hc, err := rest.HTTPClientFor(c)
	if err != nil {
		writeError(w, err)
		return
	}
	u := strings.TrimSuffix(c.Host, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, u, nil)
	if err != nil {
		writeError(w, err)
		return
	}
	req.Header.Set("Accept", "application/json")
	if table {
		req.Header.Set("Accept", tableAccept)
	}
	resp, err := hc.Do(req)
	if err != nil {
		writeStatus(w, http.StatusBadGateway, err.Error())
		return
	}
	defer func() { _ = resp.Body.Close() }()
	if each == nil && table && resp.StatusCode == http.StatusOK {
		s.relayTable(w, resp.Body)
		return
	}
	if each == nil || resp.StatusCode != http.StatusOK {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		// The headers go now, not with the first event: a quiet watch
		// would otherwise leave the page waiting for its answer.
		fl.Flush()
	}
	buf := make([]byte, 32*1024)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(each(buf[:n])); werr != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// relayTable passes a Table answer on without its rows' managedFields
// (slimTable); one too large to read whole, or unreadable, goes as it came.
func (s *Server) relayTable(w http.ResponseWriter, body io.Reader) {
	w.Header().Set("Content-Type", "application/json")
	b, err := io.ReadAll(io.LimitReader(body, maxSlimBody+1))
	if err != nil {
		writeStatus(w, http.StatusBadGateway, fmt.Sprintf("read the apiserver's answer: %v", err))
		return
	}
	if len(b) <= maxSlimBody {
		if slim, err := slimTable(b); err == nil {
			b = slim
		} else {
			s.Log.V(2).Info("Table passed on unslimmed", "err", err)
		}
	}
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(b); err != nil {
		return
	}
	_, _ = io.Copy(w, body)
}

// watch relays a watch as server-sent events, one JSON watch event per
// message; the page reconnects from the last resourceVersion.
func (s *Server) watch(w http.ResponseWriter, r *http.Request) {
	p, ok := apiPath(r.URL.Path, "/api/watch/")
	if !ok {
		writeStatus(w, http.StatusNotFound, "not an API path")
		return
	}
	var pending []byte
	table := r.URL.Query().Get("as") == "table"
	s.relay(w, r, p, forwardQuery(r.URL.Query(), true), table, func(b []byte) []byte {
		// The apiserver writes one JSON event per line; SSE wants
		// "data: ...\n\n" per event.
		pending = append(pending, b...)
		var out []byte
		for {
			i := indexNL(pending)
			if i < 0 {
				break
			}
			if line := pending[:i]; len(line) > 0 {
				if table {
					line = slimTableEvent(line)
				}
				out = append(out, "data: "...)
				out = append(out, line...)
				out = append(out, "\n\n"...)
			}
			pending = pending[i+1:]
		}
		return out
	})
}

func indexNL(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return -1
}

// logs streams a container's log as text/event-stream lines.
func (s *Server) logs(w http.ResponseWriter, r *http.Request) {
	q := url.Values{}
	in := r.URL.Query()
	for _, k := range []string{"container", "previous", "tailLines", "follow", "timestamps"} {
		if v := in.Get(k); v != "" {
			q.Set(k, v)
		}
	}
	p := fmt.Sprintf("/api/v1/namespaces/%s/pods/%s/log", url.PathEscape(r.PathValue("namespace")), url.PathEscape(r.PathValue("pod")))
	var pending []byte
	s.relay(w, r, p, q, false, func(b []byte) []byte {
		pending = append(pending, b...)
		var out []byte
		for {
			i := indexNL(pending)
			if i < 0 {
				break
			}
			line, _ := json.Marshal(string(pending[:i]))
			out = append(append(append(out, "data: "...), line...), "\n\n"...)
			pending = pending[i+1:]
		}
		return out
	})
}

// Check is one "can I" question.
type Check struct {
	Verb        string `json:"verb"`
	Group       string `json:"group"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
}

// Answer is the apiserver's answer to a Check.
type Answer struct {
	Check
	Allowed bool   `json:"allowed"`
	Reason  string `json:"reason,omitempty"`
}

// canI asks a SelfSubjectAccessReview per check, so the page offers only
// what the user may do.
func (s *Server) canI(w http.ResponseWriter, r *http.Request) {
	var checks []Check
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&checks); err != nil || len(checks) > 64 {
		writeStatus(w, http.StatusBadRequest, "want a JSON list of at most 64 checks")
		return
	}
	cs, err := kubernetes.NewForConfig(userConfig(r))
	if err != nil {
		writeError(w, err)
		return
	}
	out := make([]Answer, 0, len(checks))
	for _, c := range checks {
		res, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(r.Context(), &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: c.Verb, Group: c.Group, Resource: c.Resource, Subresource: c.Subresource, Namespace: c.Namespace, Name: c.Name},
		}}, metav1.CreateOptions{})
		if err != nil {
			writeError(w, err)
			return
		}
		reason := res.Status.Reason
		if !res.Status.Allowed && reason == "" {
			reason = fmt.Sprintf("RBAC does not allow %s on %s", c.Verb, c.Resource)
		}
		out = append(out, Answer{Check: c, Allowed: res.Status.Allowed, Reason: reason})
	}
	writeJSON(w, http.StatusOK, out)
}

// Action is a change the page asks for, on the object at Path (an API
// path of the object, e.g. /apis/apps/v1/namespaces/x/deployments/y).
type Action struct {
	Path     string `json:"path"`
	Replicas *int32 `json:"replicas,omitempty"`
	// Body is the edited object for apply, as YAML or JSON.
	Body   string `json:"body,omitempty"`
	DryRun bool   `json:"dryRun,omitempty"`
}

// action performs one of the console's explicit changes as the user.
func (s *Server) action(w http.ResponseWriter, r *http.Request) {
	var a Action
	if err := json.NewDecoder(io.LimitReader(r.Body, 4<<20)).Decode(&a); err != nil {
		writeStatus(w, http.StatusBadRequest, "want a JSON action")
		return
	}
	p, ok := apiPath(strings.TrimPrefix(a.Path, "/"), "")
	if !ok {
		writeStatus(w, http.StatusBadRequest, "path is not an API object")
		return
	}
	if r.PathValue("verb") == "drain" {
		s.drainAction(w, r, p)
		return
	}
	var (
		method      = http.MethodPatch
		contentType = string(types.MergePatchType)
		target      = p
		body        []byte
		q           = url.Values{}
	)
	switch r.PathValue("verb") {
	case "scale":
		if a.Replicas == nil || *a.Replicas < 0 {
			writeStatus(w, http.StatusBadRequest, "replicas must be 0 or more")
			return
		}
		target += "/scale"
		body = fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, *a.Replicas)
	case "restart":
		// kubectl rollout restart's semantics: a new template annotation
		// rolls every pod.
		contentType = string(types.StrategicMergePatchType)
		body = fmt.Appendf(nil, `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":%q}}}}}`, time.Now().Format(time.RFC3339))
	case "cordon", "uncordon":
		body = fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, r.PathValue("verb") == "cordon")
	case "delete":
		method, contentType = http.MethodDelete, ""
	case "apply":
		contentType = string(types.ApplyYAMLPatchType)
		body = []byte(a.Body)
		q.Set("fieldManager", "trireme-dashboard")
		q.Set("force", "true")
	default:
		writeStatus(w, http.StatusNotFound, "no such action")
		return
	}
	if a.DryRun {
		q.Set("dryRun", "All")
	}
	c := userConfig(r)
	hc, err := rest.HTTPClientFor(c)
	if err != nil {
		writeError(w, err)
		return
	}
	u := strings.TrimSuffix(c.Host, "/") + target
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(r.Context(), method, u, bytes.NewReader(body))
	if err != nil {
		writeError(w, err)
		return
	}
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := hc.Do(req)
	if err != nil {
		writeStatus(w, http.StatusBadGateway, err.Error())
		return
	}
	defer func() { _ = resp.Body.Close() }()
	// The apiserver's answer, a refusal included, is its own Status with
	// the field causes: relayed as is.
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// writeError answers with the apiserver's own Status (its code, message
// and field causes) when err came from it.
func writeError(w http.ResponseWriter, err error) {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		st := se.Status()
		if st.Code == 0 {
			st.Code = http.StatusInternalServerError
		}
		writeJSON(w, int(st.Code), st)
		return
	}
	writeStatus(w, http.StatusInternalServerError, err.Error())
}

func writeStatus(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: int32(code), Message: msg,
		Reason: reasons[code],
	})
}

var reasons = map[int]metav1.StatusReason{
	http.StatusBadRequest:          metav1.StatusReasonBadRequest,
	http.StatusUnauthorized:        metav1.StatusReasonUnauthorized,
	http.StatusForbidden:           metav1.StatusReasonForbidden,
	http.StatusNotFound:            metav1.StatusReasonNotFound,
	http.StatusBadGateway:          metav1.StatusReasonServiceUnavailable,
	http.StatusInternalServerError: metav1.StatusReasonInternalError,
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
