// Package serving is the scheduler's HTTPS endpoint on port 10259:
// /healthz, /livez and /readyz (with one sub-path per check) and
// Prometheus /metrics.
package serving

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	goruntime "runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	apiserveroptions "k8s.io/apiserver/pkg/server/options"

	"trireme.dev/scheduler/internal/metrics"
)

// shutdownTimeout bounds how long in-flight requests may finish once the
// context ends.
const shutdownTimeout = 5 * time.Second

// Debugging says which debug handlers to serve, as upstream's
// KubeSchedulerConfiguration debugging fields do.
type Debugging struct {
	// Profiling serves /debug/pprof/.
	Profiling bool
	// ContentionProfiling records blocking and mutex contention for it.
	ContentionProfiling bool
}

// Handler returns the mux: /healthz and /livez pass when every check does,
// /readyz also needs ready; /metrics serves metrics.Registry; with
// d.Profiling, /debug/pprof/ serves Go's profiles.
//
// They are open to anyone who can reach the port; delegated authentication
// and authorization through the apiserver, as upstream does, is not done
// yet.
func Handler(d Debugging, ready healthz.HealthChecker, checks ...healthz.HealthChecker) http.Handler {
	mux := http.NewServeMux()
	base := append([]healthz.HealthChecker{healthz.PingHealthz}, checks...)
	healthz.InstallHandler(mux, base...)
	healthz.InstallLivezHandler(mux, base...)
	healthz.InstallReadyzHandler(mux, append(base, ready)...)
	mux.Handle("/metrics", promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{}))
	if d.Profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		if d.ContentionProfiling {
			// As upstream: every blocking event is recorded.
			goruntime.SetBlockProfileRate(1)
		}
	}
	return mux
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
