// Package metrics holds trireme-proxy's Prometheus metrics, served on
// /metrics (port 10249).
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"trireme.dev/componentbase/processmetrics"
)

const (
	namespace = "trireme"
	subsystem = "proxy"
)

// Metrics are one proxy's metrics, registered in their own registry so
// that tests can run several proxies in one process.
type Metrics struct {
	Registry *prometheus.Registry
	// SyncDuration is labelled kind=full|partial.
	SyncDuration *prometheus.HistogramVec
	// RulesWritten counts rules and map elements written, by kind.
	RulesWritten *prometheus.CounterVec
	// Rules is the number of rules and elements the back ends hold, summed
	// over the IP families of a dual-stack proxy, as are Services and
	// Endpoints.
	Rules prometheus.Gauge
	// LastSync is the time of the last successful sync (of every family).
	LastSync prometheus.Gauge
	// FamilyLastSync is the time of the last successful sync of each IP
	// family, labelled ip_family=IPv4|IPv6.
	FamilyLastSync *prometheus.GaugeVec
	// SyncFailures counts failed syncs (each is retried).
	SyncFailures prometheus.Counter
	// FamilySyncFailures counts failed writes of each IP family's rules,
	// labelled ip_family=IPv4|IPv6.
	FamilySyncFailures *prometheus.CounterVec
	// Skipped counts objects, or parts of them, left out with a reason.
	Skipped prometheus.Counter
	// Services and Endpoints are the model's size.
	Services, Endpoints prometheus.Gauge
}

// New registers a fresh set of metrics, with the Go and process
// collectors beside them.
func New() *Metrics {
	m := &Metrics{
		Registry: processmetrics.NewRegistry(),
		SyncDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "sync_duration_seconds",
			Help:    "Time a sync of the proxy rules took, full or partial.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}, []string{"kind"}),
		RulesWritten: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "rules_written_total",
			Help: "Rules and map or set elements written to the kernel, by sync kind.",
		}, []string{"kind"}),
		Rules: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "rules",
			Help: "Rules and map or set elements the proxy currently holds in the kernel.",
		}),
		LastSync: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "last_successful_sync_timestamp_seconds",
			Help: "Unix time of the last successful sync.",
		}),
		FamilyLastSync: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "family_last_successful_sync_timestamp_seconds",
			Help: "Unix time of the last successful sync of each IP family's rules.",
		}, []string{"ip_family"}),
		SyncFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "sync_failures_total",
			Help: "Syncs that failed to write their rules; each is retried.",
		}),
		FamilySyncFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "family_sync_failures_total",
			Help: "Failed writes of each IP family's rules; each is retried.",
		}, []string{"ip_family"}),
		Skipped: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "skipped_objects_total",
			Help: "Services, ports or EndpointSlices left out of the rules, with a logged reason.",
		}),
		Services: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "service_ports",
			Help: "Service ports proxied.",
		}),
		Endpoints: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: subsystem, Name: "endpoints",
			Help: "Endpoints across all proxied Service ports.",
		}),
	}
	m.Registry.MustRegister(m.SyncDuration, m.RulesWritten, m.Rules, m.LastSync, m.FamilyLastSync, m.SyncFailures, m.FamilySyncFailures, m.Skipped, m.Services, m.Endpoints)
	return m
}
