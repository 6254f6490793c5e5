// Package metrics holds trireme-scheduler's Prometheus metrics (namespace
// trireme, subsystem scheduler): attempts by result, attempt and
// end-to-end latencies, per-extension-point latency, queue depths,
// preemption, leadership.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"trireme.dev/componentbase/leaderelection"
	"trireme.dev/componentbase/processmetrics"
)

const (
	namespace = "trireme"
	subsystem = "scheduler"
)

// Registry is what /metrics serves: the process's own, so that libraries
// cannot add to it unasked.
var Registry = processmetrics.NewRegistry()

// Results of a scheduling attempt.
const (
	Scheduled     = "scheduled"
	Unschedulable = "unschedulable"
	Error         = "error"
)

var (
	// ScheduleAttempts counts attempts by result and profile.
	ScheduleAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "schedule_attempts_total",
		Help: "Scheduling attempts, by result (scheduled, unschedulable, error) and profile.",
	}, []string{"result", "profile"})
	// AttemptDuration is one attempt's scheduling cycle.
	AttemptDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "scheduling_attempt_duration_seconds",
		Help:    "Scheduling cycle latency (queue pop to assume or failure), by result and profile.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18),
	}, []string{"result", "profile"})
	// E2EDuration is from a pod's first entry in the queue to its binding.
	E2EDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "e2e_scheduling_duration_seconds",
		Help:    "Time from a pod's first entry in the scheduling queue to its successful binding, over every attempt.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 20),
	}, []string{"profile"})
	// ExtensionPointDuration times each extension point.
	ExtensionPointDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "framework_extension_point_duration_seconds",
		Help:    "Latency of running the plugins of an extension point, by extension point and profile.",
		Buckets: prometheus.ExponentialBuckets(0.00001, 2, 20),
	}, []string{"extension_point", "profile"})
	// PluginExecutionDuration times single plugins in sampled cycles.
	PluginExecutionDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "plugin_execution_duration_seconds",
		Help:    "Duration of running one plugin at one extension point, in the one cycle in ten sampled, by plugin, extension point and status.",
		Buckets: prometheus.ExponentialBuckets(0.00001, 1.5, 20),
	}, []string{"plugin", "extension_point", "status"})
	// BindingDuration times the binding cycle.
	BindingDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "binding_duration_seconds",
		Help:    "Binding cycle latency (permit wait, pre-bind, bind).",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
	})
	// PreemptionAttempts counts PostFilter preemption runs.
	PreemptionAttempts = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "preemption_attempts_total",
		Help: "Preemption attempts.",
	})
	// PreemptionVictims counts pods evicted by preemption.
	PreemptionVictims = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "preemption_victims_total",
		Help: "Pods deleted to make room for higher-priority pods.",
	})
	// Leader is 1 while this process leads.
	Leader = leaderelection.NewGauge(namespace, subsystem)
)

// QueueLengths reports the scheduling queue's depths.
type QueueLengths func() (active, backoff, unschedulable, gated int)

// RegisterQueue adds the pending_pods gauge, read from f at each scrape.
func RegisterQueue(f QueueLengths) {
	desc := prometheus.NewDesc(prometheus.BuildFQName(namespace, subsystem, "pending_pods"),
		"Pods waiting to be scheduled, by queue (active, backoff, unschedulable, gated).", []string{"queue"}, nil)
	_ = Registry.Register(pendingCollector{desc: desc, f: f})
}

type pendingCollector struct {
	desc *prometheus.Desc
	f    QueueLengths
}

func (c pendingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c pendingCollector) Collect(ch chan<- prometheus.Metric) {
	a, b, u, g := c.f()
	for q, n := range map[string]int{"active": a, "backoff": b, "unschedulable": u, "gated": g} {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), q)
	}
}

func init() {
	Registry.MustRegister(
		ScheduleAttempts, AttemptDuration, E2EDuration, ExtensionPointDuration, PluginExecutionDuration, BindingDuration,
		PreemptionAttempts, PreemptionVictims, Leader,
	)
}
