// Package server is the kubelet's node server on :10250: TLS, requests
// authenticated by client certificate or bearer token (TokenReview) and
// authorized by SubjectAccessReview against the node resource, as
// upstream's; /healthz, /metrics, /pods, /containerLogs, /stats/summary, and /exec,
// /attach and /portForward proxied to the runtime's streaming server.
package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilproxy "k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	cri "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/logs"
)

// Pods is what the server needs from the kubelet.
type Pods interface {
	// Pods lists the pods the kubelet runs.
	Pods() []*corev1.Pod
	// FindPod returns the pod with this namespace and name, or nil.
	FindPod(namespace, name string) *corev1.Pod
	// Container returns the runtime ID and log path of a pod's container:
	// its current instance, or the one before when previous is set.
	Container(ctx context.Context, pod *corev1.Pod, container string, previous bool) (id, logPath string, err error)
	// Sandbox returns the runtime ID of the pod's ready sandbox.
	Sandbox(ctx context.Context, pod *corev1.Pod) (string, error)
}

// Config is what the server is built from.
type Config struct {
	NodeName string
	Pods     Pods
	Runtime  cri.RuntimeService
	// Authenticator and Authorizer guard every request but /healthz; nil
	// Authorizer allows every authenticated request.
	Authenticator authenticator.Request
	Authorizer    authorizer.Authorizer
	Registry      *prometheus.Registry
	Log           logr.Logger
	// RootDir's file system is reported as the node's in /stats/summary.
	RootDir string
	// LogDir is served under /logs/ (upstream's system log handler:
	// /var/log); empty disables it.
	LogDir string
	// Profiling serves Go's pprof handlers under /debug/pprof/, as
	// upstream's enableProfilingHandler does.
	Profiling bool
}

// Handler returns the node server's mux.
func Handler(cfg Config) http.Handler {
	s := &server{cfg: cfg}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.Handle("/metrics", promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/pods", s.pods)
	mux.HandleFunc("/runningpods/", s.pods)
	mux.HandleFunc("/containerLogs/", s.containerLogs)
	mux.HandleFunc("/exec/", s.exec)
	mux.HandleFunc("/attach/", s.attach)
	mux.HandleFunc("/portForward/", s.portForward)
	mux.HandleFunc("/stats/summary", s.statsSummary)
	mux.Handle("/metrics/resource", s.resourceMetrics())
	if cfg.Profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	if cfg.LogDir != "" {
		mux.Handle("/logs/", http.StripPrefix("/logs/", http.FileServer(http.Dir(cfg.LogDir))))
	}
	return s.guard(mux)
}

type server struct{ cfg Config }

// guard authenticates and authorizes, as upstream's kubelet does: the
// request is an action on the node resource, the subresource named by
// the path.
func (s *server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			next.ServeHTTP(w, r)
			return
		}
		if s.cfg.Authenticator == nil {
			next.ServeHTTP(w, r)
			return
		}
		resp, ok, err := s.cfg.Authenticator.AuthenticateRequest(r)
		if err != nil || !ok {
			if err != nil {
				s.cfg.Log.V(2).Info("Unauthorized request", "err", err.Error(), "path", r.URL.Path)
			}
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		if s.cfg.Authorizer != nil {
			attrs := Attributes(resp.User, r, s.cfg.NodeName)
			decision, reason, err := s.cfg.Authorizer.Authorize(r.Context(), attrs)
			if err != nil || decision != authorizer.DecisionAllow {
				msg := fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=%s, subresource=%s)", resp.User.GetName(), attrs.GetVerb(), attrs.GetResource(), attrs.GetSubresource())
				if reason != "" {
					msg += ": " + reason
				}
				http.Error(w, msg, http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Attributes maps a request to the node subresource upstream's kubelet
// authorizes it as.
func Attributes(u user.Info, r *http.Request, nodeName string) authorizer.AttributesRecord {
	verb := "get"
	switch r.Method {
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
	}
	sub := "proxy"
	switch {
	case strings.HasPrefix(r.URL.Path, "/stats"):
		sub = "stats"
	case strings.HasPrefix(r.URL.Path, "/metrics"):
		sub = "metrics"
	case strings.HasPrefix(r.URL.Path, "/logs"):
		sub = "log"
	}
	return authorizer.AttributesRecord{
		User:            u,
		Verb:            verb,
		APIGroup:        "",
		APIVersion:      "v1",
		Resource:        "nodes",
		Subresource:     sub,
		Name:            nodeName,
		ResourceRequest: true,
		Path:            r.URL.Path,
	}
}

func (s *server) pods(w http.ResponseWriter, _ *http.Request) {
	list := corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}}
	for _, p := range s.cfg.Pods.Pods() {
		list.Items = append(list.Items, *p)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&list)
}

// parts splits /prefix/ns/pod[/uid]/container into its parts.
func parts(path, prefix string) []string {
	return strings.Split(strings.Trim(strings.TrimPrefix(path, prefix), "/"), "/")
}

func (s *server) lookup(w http.ResponseWriter, ns, name string) *corev1.Pod {
	pod := s.cfg.Pods.FindPod(ns, name)
	if pod == nil {
		http.Error(w, fmt.Sprintf("pod %s/%s not found", ns, name), http.StatusNotFound)
	}
	return pod
}

func (s *server) containerLogs(w http.ResponseWriter, r *http.Request) {
	p := parts(r.URL.Path, "/containerLogs/")
	if len(p) != 3 {
		http.Error(w, "path must be /containerLogs/{namespace}/{pod}/{container}", http.StatusBadRequest)
		return
	}
	pod := s.lookup(w, p[0], p[1])
	if pod == nil {
		return
	}
	q := r.URL.Query()
	previous, _ := strconv.ParseBool(q.Get("previous"))
	id, path, err := s.cfg.Pods.Container(r.Context(), pod, p[2], previous)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	opts, err := logOptions(q)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	fw := &flushWriter{w: w}
	if f, ok := w.(http.Flusher); ok {
		fw.f = f
	}
	if err := logs.ReadLogs(r.Context(), path, id, opts, s.cfg.Runtime, fw, fw); err != nil && !errors.Is(err, context.Canceled) {
		s.cfg.Log.V(2).Info("Read container logs failed", "err", err.Error())
	}
}

// logOptions turns the PodLogOptions query into the CRI log reader's.
func logOptions(q url.Values) (*logs.LogOptions, error) {
	apiOpts := &corev1.PodLogOptions{}
	var err error
	if v := q.Get("follow"); v != "" {
		apiOpts.Follow, err = strconv.ParseBool(v)
	}
	if v := q.Get("timestamps"); v != "" && err == nil {
		apiOpts.Timestamps, err = strconv.ParseBool(v)
	}
	if v := q.Get("tailLines"); v != "" && err == nil {
		var n int64
		n, err = strconv.ParseInt(v, 10, 64)
		apiOpts.TailLines = &n
	}
	if v := q.Get("limitBytes"); v != "" && err == nil {
		var n int64
		n, err = strconv.ParseInt(v, 10, 64)
		apiOpts.LimitBytes = &n
	}
	if v := q.Get("sinceSeconds"); v != "" && err == nil {
		var n int64
		n, err = strconv.ParseInt(v, 10, 64)
		apiOpts.SinceSeconds = &n
	}
	if v := q.Get("sinceTime"); v != "" && err == nil {
		var t time.Time
		t, err = time.Parse(time.RFC3339, v)
		apiOpts.SinceTime = &metav1.Time{Time: t}
	}
	if err != nil {
		return nil, fmt.Errorf("invalid log options: %w", err)
	}
	opts := &logs.LogOptions{TailLines: apiOpts.TailLines, LimitBytes: apiOpts.LimitBytes, Follow: apiOpts.Follow, Timestamp: apiOpts.Timestamps}
	if apiOpts.SinceSeconds != nil {
		opts.Since = time.Now().Add(-time.Duration(*apiOpts.SinceSeconds) * time.Second)
	}
	if apiOpts.SinceTime != nil {
		opts.Since = apiOpts.SinceTime.Time
	}
	return opts, nil
}

type flushWriter struct {
	w http.ResponseWriter
	f http.Flusher
}

func (f *flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if f.f != nil {
		f.f.Flush()
	}
	return n, err
}

// streamOptions reads exec/attach's stdin, stdout, stderr and tty flags,
// in the spellings both kubectl's and the apiserver's requests use.
func streamOptions(q url.Values) (stdin, stdout, stderr, tty bool) {
	b := func(names ...string) bool {
		for _, n := range names {
			if v, err := strconv.ParseBool(q.Get(n)); err == nil && v {
				return true
			}
		}
		return false
	}
	return b("input", "stdin"), b("output", "stdout"), b("error", "stderr"), b("tty")
}

// containerTarget resolves /prefix/ns/pod[/uid]/container.
func (s *server) containerTarget(w http.ResponseWriter, r *http.Request, prefix string) (string, bool) {
	p := parts(r.URL.Path, prefix)
	if len(p) != 3 && len(p) != 4 {
		http.Error(w, "path must be "+prefix+"{namespace}/{pod}[/{uid}]/{container}", http.StatusBadRequest)
		return "", false
	}
	pod := s.lookup(w, p[0], p[1])
	if pod == nil {
		return "", false
	}
	if len(p) == 4 && string(pod.UID) != p[2] {
		http.Error(w, "pod UID mismatch", http.StatusNotFound)
		return "", false
	}
	id, _, err := s.cfg.Pods.Container(r.Context(), pod, p[len(p)-1], false)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return "", false
	}
	return id, true
}

func (s *server) exec(w http.ResponseWriter, r *http.Request) {
	id, ok := s.containerTarget(w, r, "/exec/")
	if !ok {
		return
	}
	q := r.URL.Query()
	stdin, stdout, stderr, tty := streamOptions(q)
	resp, err := s.cfg.Runtime.Exec(r.Context(), &runtimeapi.ExecRequest{
		ContainerId: id, Cmd: q["command"], Stdin: stdin, Stdout: stdout, Stderr: stderr && !tty, Tty: tty,
	})
	if err != nil {
		http.Error(w, fmt.Sprintf("exec: %v", err), http.StatusInternalServerError)
		return
	}
	s.proxyStream(w, r, resp.Url)
}

func (s *server) attach(w http.ResponseWriter, r *http.Request) {
	id, ok := s.containerTarget(w, r, "/attach/")
	if !ok {
		return
	}
	stdin, stdout, stderr, tty := streamOptions(r.URL.Query())
	resp, err := s.cfg.Runtime.Attach(r.Context(), &runtimeapi.AttachRequest{
		ContainerId: id, Stdin: stdin, Stdout: stdout, Stderr: stderr && !tty, Tty: tty,
	})
	if err != nil {
		http.Error(w, fmt.Sprintf("attach: %v", err), http.StatusInternalServerError)
		return
	}
	s.proxyStream(w, r, resp.Url)
}

func (s *server) portForward(w http.ResponseWriter, r *http.Request) {
	p := parts(r.URL.Path, "/portForward/")
	if len(p) != 2 && len(p) != 3 {
		http.Error(w, "path must be /portForward/{namespace}/{pod}[/{uid}]", http.StatusBadRequest)
		return
	}
	pod := s.lookup(w, p[0], p[1])
	if pod == nil {
		return
	}
	sandbox, err := s.cfg.Pods.Sandbox(r.Context(), pod)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var ports []int32
	for _, v := range r.URL.Query()["port"] {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			http.Error(w, fmt.Sprintf("invalid port %q", v), http.StatusBadRequest)
			return
		}
		ports = append(ports, int32(n))
	}
	resp, err := s.cfg.Runtime.PortForward(r.Context(), &runtimeapi.PortForwardRequest{PodSandboxId: sandbox, Port: ports})
	if err != nil {
		http.Error(w, fmt.Sprintf("port-forward: %v", err), http.StatusInternalServerError)
		return
	}
	s.proxyStream(w, r, resp.Url)
}

// proxyStream hands the upgraded connection to the runtime's streaming
// server at rawURL, as upstream's kubelet does when it redirects
// internally.
func (s *server) proxyStream(w http.ResponseWriter, r *http.Request, rawURL string) {
	u, err := url.Parse(rawURL)
	if err != nil {
		http.Error(w, fmt.Sprintf("runtime streaming URL %q: %v", rawURL, err), http.StatusInternalServerError)
		return
	}
	// The runtime's URL carries the session token in its path; the
	// client's query names what it already asked the runtime for.
	u.RawQuery = ""
	h := utilproxy.NewUpgradeAwareHandler(u, http.DefaultTransport, false, true, responder{s.cfg.Log})
	h.UseRequestLocation = false
	h.ServeHTTP(w, r)
}

type responder struct{ log logr.Logger }

func (r responder) Error(w http.ResponseWriter, _ *http.Request, err error) {
	r.log.Error(err, "Stream proxy failed")
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

// Serve serves handler over TLS on addr until ctx ends with the
// certificate getCert returns (a fixed one, or the serving certificate
// manager's current one); clients may present a certificate, which the
// authenticator verifies.
func Serve(ctx context.Context, addr string, getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error), handler http.Handler, log logr.Logger) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 30 * time.Second,
		TLSConfig: &tls.Config{
			GetCertificate: getCert,
			ClientAuth:     tls.RequestClientCert,
			MinVersion:     tls.VersionTLS12,
			NextProtos:     []string{"http/1.1"},
		},
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	go func() {
		if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(err, "Node server stopped")
		}
	}()
	return ln.Addr(), nil
}
