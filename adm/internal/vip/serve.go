package vip

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/tools/leaderelection"

	"trireme.dev/componentbase/processmetrics"
)

// DefaultPort is the port of DefaultBindAddress.
const DefaultPort = 10262

// DefaultBindAddress is where the manager serves /healthz and /metrics:
// loopback only, as upstream's kube-proxy serves its metrics, since both
// answer without authentication.
var DefaultBindAddress = net.JoinHostPort("127.0.0.1", strconv.Itoa(DefaultPort))

// WatchdogTimeout is how long past a missed renewal /healthz still says ok,
// in every mode of trireme-vip: a holder that cannot renew gives its
// addresses up by itself within the renew deadline, so failing later would
// only restart a process that already let go.
const WatchdogTimeout = 20 * time.Second

// status is what the manager exports: Prometheus metrics and the leader
// election's health.
type status struct {
	registry    *prometheus.Registry
	held        atomic.Bool // the address is on this node
	holding     prometheus.Gauge
	transitions *prometheus.CounterVec
	failures    *prometheus.CounterVec
	watchdog    *leaderelection.HealthzAdaptor
}

func newStatus() *status {
	s := &status{
		registry: processmetrics.NewRegistry(),
		holding: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "trireme", Subsystem: "vip", Name: "holding",
			Help: "1 while this node holds the virtual IP, else 0.",
		}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "trireme", Subsystem: "vip", Name: "transitions_total",
			Help: "Times this node took (acquired) or gave up (released) the virtual IP.",
		}, []string{"event"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "trireme", Subsystem: "vip", Name: "failures_total",
			Help: "Failed operations on the virtual IP, by operation (add, delete, announce).",
		}, []string{"operation"}),
		watchdog: leaderelection.NewLeaderHealthzAdaptor(WatchdogTimeout),
	}
	s.registry.MustRegister(s.holding, s.transitions, s.failures)
	return s
}

// Handler serves /healthz (ok unless this node leads and has failed to
// renew the lease for longer than it may) and /metrics.
func (m *Manager) Handler() http.Handler {
	return StatusHandler(m.status.watchdog, m.status.registry)
}

// StatusHandler serves /healthz from watchdog (ok unless its holder has
// failed to renew its Lease for longer than it may) and /metrics from
// registry: what every mode of trireme-vip exports.
func StatusHandler(watchdog *leaderelection.HealthzAdaptor, registry *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if err := watchdog.Check(r); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux.Handle("/metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	return mux
}

// Serve serves Handler on addr until ctx ends. It listens before it
// returns, so an address in use is reported at once.
func (m *Manager) Serve(ctx context.Context, addr string) error {
	return Serve(ctx, addr, m.Handler(), m.log)
}

// Serve serves h over plain HTTP on addr until ctx ends. It listens before
// it returns, so an address in use is reported at once; later failures are
// logged to log.
func Serve(ctx context.Context, addr string, h http.Handler, log logr.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve /healthz and /metrics: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(err, "Serving /healthz and /metrics stopped", "address", addr)
		}
	}()
	return nil
}
