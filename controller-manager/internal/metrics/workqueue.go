package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
)

// The work queue metrics mirror the ones upstream components publish under
// workqueue_*, labelled by queue name.
var (
	queueDepth = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "workqueue_depth",
		Help: "Current depth of the work queue.",
	}, []string{"name"})
	queueAdds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "workqueue_adds_total",
		Help: "Adds handled by the work queue.",
	}, []string{"name"})
	queueLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "workqueue_queue_duration_seconds",
		Help:    "How long an item stays in the work queue before being requested.",
		Buckets: prometheus.ExponentialBuckets(1e-6, 10, 10),
	}, []string{"name"})
	queueWork = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "workqueue_work_duration_seconds",
		Help:    "How long processing an item from the work queue takes.",
		Buckets: prometheus.ExponentialBuckets(1e-6, 10, 10),
	}, []string{"name"})
	queueUnfinished = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "workqueue_unfinished_work_seconds",
		Help: "Seconds of work in progress not yet observed by work_duration; large values mean stuck workers.",
	}, []string{"name"})
	queueLongest = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "workqueue_longest_running_processor_seconds",
		Help: "Seconds the longest running processor of the work queue has been running.",
	}, []string{"name"})
	queueRetries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "workqueue_retries_total",
		Help: "Retries handled by the work queue.",
	}, []string{"name"})
)

// queueProvider hands each work queue the label values of its name.
type queueProvider struct{}

func (queueProvider) NewDepthMetric(name string) workqueue.GaugeMetric {
	return queueDepth.WithLabelValues(name)
}

func (queueProvider) NewAddsMetric(name string) workqueue.CounterMetric {
	return queueAdds.WithLabelValues(name)
}

func (queueProvider) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return queueLatency.WithLabelValues(name)
}

func (queueProvider) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return queueWork.WithLabelValues(name)
}

func (queueProvider) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return queueUnfinished.WithLabelValues(name)
}

func (queueProvider) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return queueLongest.WithLabelValues(name)
}

func (queueProvider) NewRetriesMetric(name string) workqueue.CounterMetric {
	return queueRetries.WithLabelValues(name)
}
