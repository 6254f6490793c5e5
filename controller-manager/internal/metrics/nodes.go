package metrics

import "github.com/prometheus/client_golang/prometheus"

// Figures of the node, node-joining and autoscaling controllers, after
// upstream's node_collector_* and certificate metrics.
var (
	zoneSize = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "node_zone_size",
		Help: "Nodes in each zone, as the node lifecycle controller last counted them.",
	}, []string{"zone"})
	zoneUnhealthy = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "node_zone_unhealthy_nodes",
		Help: "Nodes in each zone whose Ready condition is not True.",
	}, []string{"zone"})
	zoneHealth = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "node_zone_health_percent",
		Help: "Percentage of ready nodes in each zone.",
	}, []string{"zone"})
	taintEvictions = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "taint_eviction_pods_total",
		Help: "Pods deleted by the taint-eviction controller for NoExecute taints.",
	})
	csrDecisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "csr_total",
		Help: "CertificateSigningRequests auto-approved or signed, by signer and action.",
	}, []string{"signer", "action"})
	rescales = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: subsystem, Name: "hpa_rescales_total",
		Help: "Scale changes made by the horizontal pod autoscaler, by direction (up or down).",
	}, []string{"direction"})
)

func init() {
	Registry.MustRegister(zoneSize, zoneUnhealthy, zoneHealth, taintEvictions, csrDecisions, rescales)
}

// SetZone records a zone's size and how many of its nodes are not ready.
func SetZone(zone string, size, unhealthy int) {
	if zone == "" {
		zone = "none"
	}
	zoneSize.WithLabelValues(zone).Set(float64(size))
	zoneUnhealthy.WithLabelValues(zone).Set(float64(unhealthy))
	if size > 0 {
		zoneHealth.WithLabelValues(zone).Set(100 * float64(size-unhealthy) / float64(size))
	}
}

// TaintEviction counts one pod evicted for a NoExecute taint.
func TaintEviction() { taintEvictions.Inc() }

// CSR counts one CSR of signer approved or signed (action).
func CSR(signer, action string) { csrDecisions.WithLabelValues(signer, action).Inc() }

// Rescale counts one autoscaler scale change in direction up or down.
func Rescale(direction string) { rescales.WithLabelValues(direction).Inc() }
