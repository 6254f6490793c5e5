// Package metrics holds trireme-kubelet's Prometheus registry: the Go and
// process collectors and the kubelet's own metrics (namespace trireme,
// subsystem kubelet).
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"trireme.dev/componentbase/processmetrics"
)

// Registry is what /metrics serves.
var Registry = processmetrics.NewRegistry()

// Metrics the pod workers record.
var (
	// PodStartDuration is the time from a pod's first sight to all its
	// containers running.
	PodStartDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "trireme", Subsystem: "kubelet", Name: "pod_start_duration_seconds",
		Help:    "Time from the kubelet first seeing a pod to all its containers running.",
		Buckets: prometheus.ExponentialBuckets(0.05, 2, 12),
	})
	// PodStartStepDuration is the time each step of a pod's start-up took
	// (waiting for a sandbox slot, creating the sandbox, starting a
	// container, writing the status...).
	PodStartStepDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "trireme", Subsystem: "kubelet", Name: "pod_start_step_duration_seconds",
		Help:    "Time each step of a pod's start-up took, from the kubelet first seeing it to its Running status written.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	}, []string{"step"})
	// RunningPods is the number of pods with a ready sandbox.
	RunningPods = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "trireme", Subsystem: "kubelet", Name: "running_pods",
		Help: "Pods the kubelet runs.",
	})
	// SyncErrors counts pod syncs that failed.
	SyncErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "trireme", Subsystem: "kubelet", Name: "pod_sync_errors_total",
		Help: "Pod syncs that ended in an error.",
	})
)

func init() {
	Registry.MustRegister(PodStartDuration, PodStartStepDuration, RunningPods, SyncErrors)
}
