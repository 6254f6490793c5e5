// Package serving is the controller-manager's HTTPS endpoint on port
// 10257: /healthz (with one sub-path per check) and Prometheus /metrics.
package serving

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"

	"trireme.dev/controller-manager/internal/metrics"
)

// shutdownTimeout bounds how long in-flight requests may finish once the
// context ends.
const shutdownTimeout = 5 * time.Second

// Handler returns the mux: /healthz passes when every check does (ping
// alone when none is given), /metrics serves metrics.Registry.
//
// Both are open to anyone who can reach the port; delegated authentication
// and authorization of /metrics through the apiserver, as upstream does,
// waits for TokenReview and SubjectAccessReview.
func Handler(checks ...healthz.HealthChecker) http.Handler {
	mux := http.NewServeMux()
	healthz.InstallHandler(mux, append([]healthz.HealthChecker{healthz.PingHealthz}, checks...)...)
	mux.Handle("/metrics", promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{}))
	return mux
}

// WithProfiling adds Go's /debug/pprof handlers to mux (upstream's
// --profiling); mux must be one Handler returned.
func WithProfiling(mux http.Handler) http.Handler {
	m := mux.(*http.ServeMux)
	m.HandleFunc("/debug/pprof/", pprof.Index)
	m.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	m.HandleFunc("/debug/pprof/profile", pprof.Profile)
	m.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	m.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return m
}

// Start serves handler over HTTPS as o describes until ctx ends. With no
// certificate given it makes a self-signed one in memory (or in --cert-dir).
// It returns the bound address, or "" when --secure-port is 0.
func Start(ctx context.Context, o *apiserveroptions.SecureServingOptions, handler http.Handler) (string, error) {
	if o.BindPort == 0 && o.Listener == nil {
		return "", nil
	}
	if err := o.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{net.ParseIP("127.0.0.1")}); err != nil {
		return "", fmt.Errorf("serving certificate: %w", err)
	}
	var info *server.SecureServingInfo
	if err := o.ApplyTo(&info); err != nil {
		return "", fmt.Errorf("secure serving: %w", err)
	}
	if _, _, err := info.Serve(handler, shutdownTimeout, ctx.Done()); err != nil {
		return "", fmt.Errorf("serve on %s: %w", info.Listener.Addr(), err)
	}
	return info.Listener.Addr().String(), nil
}
