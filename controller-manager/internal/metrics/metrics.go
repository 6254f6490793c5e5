// Package metrics holds trireme-controller-manager's Prometheus metrics
// (namespace trireme, subsystem controller_manager): work queue figures,
// per-controller sync counts and latencies, leadership, and when this node's
// certificates expire.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"

	"trireme.dev/componentbase/leaderelection"
	"trireme.dev/componentbase/processmetrics"
)

const (
	namespace = "trireme"
	subsystem = "controller_manager"
)

// Registry is what /metrics serves. It is the process's own registry rather
// than Prometheus' global one so that libraries cannot add to it unasked.
var Registry = processmetrics.NewRegistry()

var (
	syncs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "syncs_total",
		Help: "Reconciles run, by controller and result (success or error).",
	}, []string{"controller", "result"})
	syncDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "sync_duration_seconds",
		Help:    "Time one reconcile took, by controller.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	}, []string{"controller"})
	leading = leaderelection.NewGauge(namespace, subsystem)
	// CertificateExpiration is when each certificate in this node's
	// certificates directory expires (package certexpiry).
	CertificateExpiration = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "certificate_expiration_timestamp_seconds",
		Help: "When each certificate in this node's certificates directory expires (Unix time), by its path below the directory without .crt.",
	}, []string{"certificate"})
	controllersRunning = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "controller_running",
		Help: "1 for each controller this process runs.",
	}, []string{"controller"})
)

func init() {
	Registry.MustRegister(
		syncs, syncDuration, leading, controllersRunning, CertificateExpiration,
		queueDepth, queueAdds, queueLatency, queueWork, queueUnfinished, queueLongest, queueRetries,
	)
}

// ObserveSync records one reconcile of controller that took d and ended in err.
func ObserveSync(controller string, d time.Duration, err error) {
	result := "success"
	if err != nil {
		result = "error"
	}
	syncs.WithLabelValues(controller, result).Inc()
	syncDuration.WithLabelValues(controller).Observe(d.Seconds())
}

// SetLeading records whether this process is the active leader.
var SetLeading = leaderelection.SetGauge(leading)

// SetRunning records that controller runs (or stopped).
func SetRunning(controller string, on bool) {
	if on {
		controllersRunning.WithLabelValues(controller).Set(1)
	} else {
		controllersRunning.WithLabelValues(controller).Set(0)
	}
}

// WorkqueueProvider returns the provider to pass in a work queue's config so
// its figures land in Registry under the queue's name.
func WorkqueueProvider() workqueue.MetricsProvider { return queueProvider{} }
