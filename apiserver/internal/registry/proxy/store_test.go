package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
)

// recordingResponder is a rest.Responder that keeps the error it is given
// and writes its status code.
type recordingResponder struct {
	w   http.ResponseWriter
	err error
}

func (r *recordingResponder) Object(code int, _ runtime.Object) { r.w.WriteHeader(code) }

func (r *recordingResponder) Error(err error) {
	r.err = err
	r.w.WriteHeader(int(statusCode(err)))
}

// echo answers with what it received; HTML when asked for /page.
func echo(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/page" {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><body><a href="/other">x</a></body></html>`)
		return
	}
	body, _ := io.ReadAll(r.Body)
	fmt.Fprintf(w, "%s %s ?%s %s", r.Method, r.URL.Path, r.URL.RawQuery, body)
}

func fixedStore(u *url.URL, err error) *Store {
	return &Store{
		newOptions: func() runtime.Object { return &corev1.PodProxyOptions{} },
		locate: func(context.Context, string) (target, error) {
			return target{URL: u}, err
		},
	}
}

func TestConnect(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(echo))
	defer backend.Close()
	base, _ := url.Parse(backend.URL)
	const prefix = "/api/v1/namespaces/default/pods/web:80/proxy"

	tests := []struct {
		name, method, path, body string
		wantCode                 int
		wantBody, wantLocation   string
	}{
		{name: "GET with path and query", method: "GET", path: "/hello/world?a=1&b=2", wantCode: 200, wantBody: "GET /hello/world ?a=1&b=2 "},
		{name: "POST body forwarded", method: "POST", path: "/submit", body: "payload", wantCode: 200, wantBody: "POST /submit ? payload"},
		{name: "PATCH forwarded", method: "PATCH", path: "/p", body: "x", wantCode: 200, wantBody: "PATCH /p ? x"},
		{name: "trailing slash kept", method: "GET", path: "/dir/", wantCode: 200, wantBody: "GET /dir/ ? "},
		{name: "root without slash redirects", method: "GET", path: "", wantCode: 301, wantLocation: prefix + "/"},
		{name: "HTML links rewritten through the proxy", method: "GET", path: "/page", wantCode: 200, wantBody: `href="` + prefix + `/other"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, prefix+tt.path, strings.NewReader(tt.body))
			rec := httptest.NewRecorder()
			resp := &recordingResponder{w: rec}
			h, err := fixedStore(base, nil).Connect(req.Context(), "web:80", &corev1.PodProxyOptions{Path: strings.SplitN(tt.path, "?", 2)[0]}, resp)
			if err != nil {
				t.Fatal(err)
			}
			h.ServeHTTP(rec, req)
			if rec.Code != tt.wantCode || resp.err != nil {
				t.Fatalf("code %d (responder error %v), want %d; body %q", rec.Code, resp.err, tt.wantCode, rec.Body)
			}
			if !strings.Contains(rec.Body.String(), tt.wantBody) {
				t.Fatalf("body %q, want it to contain %q", rec.Body, tt.wantBody)
			}
			if loc := rec.Header().Get("Location"); loc != tt.wantLocation {
				t.Fatalf("Location %q, want %q", loc, tt.wantLocation)
			}
		})
	}
}

func TestConnectErrors(t *testing.T) {
	t.Run("unreachable backend is a 503 status", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		u, _ := url.Parse(dead.URL)
		dead.Close()
		req := httptest.NewRequest("GET", "/api/v1/namespaces/default/pods/web/proxy/x", nil)
		rec := httptest.NewRecorder()
		resp := &recordingResponder{w: rec}
		h, err := fixedStore(u, nil).Connect(req.Context(), "web", &corev1.PodProxyOptions{Path: "/x"}, resp)
		if err != nil {
			t.Fatal(err)
		}
		h.ServeHTTP(rec, req)
		if statusCode(resp.err) != 503 || !strings.Contains(resp.err.Error(), "error trying to reach service") {
			t.Fatalf("responder error %v, want a 503 'error trying to reach service'", resp.err)
		}
	})
	t.Run("locate error returned", func(t *testing.T) {
		want := apierrors.NewServiceUnavailable("no endpoints")
		_, err := fixedStore(nil, want).Connect(context.Background(), "web", &corev1.PodProxyOptions{}, nil)
		if err != want {
			t.Fatalf("Connect error %v, want %v", err, want)
		}
	})
	t.Run("wrong options kind", func(t *testing.T) {
		_, err := fixedStore(nil, nil).Connect(context.Background(), "web", &corev1.PodLogOptions{}, nil)
		if statusCode(err) != 500 {
			t.Fatalf("Connect error %v, want a 500", err)
		}
	})
}

func TestStoreKinds(t *testing.T) {
	tests := []struct {
		name  string
		store *Store
		want  runtime.Object
	}{
		{name: "pods", store: NewPodStore(newObjects("pods"), nil), want: &corev1.PodProxyOptions{}},
		{name: "services", store: NewServiceStore(newObjects("services"), newObjects("pods"), &sliceList{}, nil), want: &corev1.ServiceProxyOptions{}},
		{name: "nodes", store: NewNodeStore(newObjects("nodes"), NodeStoreConfig{}), want: &corev1.NodeProxyOptions{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts, withPath, field := tt.store.NewConnectOptions()
			if fmt.Sprintf("%T", opts) != fmt.Sprintf("%T", tt.want) || !withPath || field != "path" {
				t.Fatalf("NewConnectOptions() = %T, %v, %q", opts, withPath, field)
			}
			if fmt.Sprintf("%T", tt.store.New()) != fmt.Sprintf("%T", tt.want) {
				t.Fatalf("New() = %T, want %T", tt.store.New(), tt.want)
			}
			want := []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}
			if got := tt.store.ConnectMethods(); !slices.Equal(got, want) {
				t.Fatalf("ConnectMethods() = %v, want %v", got, want)
			}
		})
	}
}
