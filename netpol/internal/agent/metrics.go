package agent

import (
	"context"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"trireme.dev/componentbase/processmetrics"
	"trireme.dev/netpol/internal/policy"
	"trireme.dev/netpol/internal/ruleset"
)

// Metrics are the agent's Prometheus metrics, in a registry of their own.
type Metrics struct {
	Registry     *prometheus.Registry
	syncDuration prometheus.Histogram
	syncFailures prometheus.Counter
	lastSync     prometheus.Gauge
	policedPods  *prometheus.GaugeVec
	rules        prometheus.Gauge
	elements     prometheus.Gauge
	cut          prometheus.Counter
}

// CounterSource reads the table's named counters at scrape time.
type CounterSource func(ctx context.Context) (map[string]uint64, error)

var (
	dropsDesc   = prometheus.NewDesc("trireme_netpol_dropped_packets_total", "Packets a NetworkPolicy dropped, per policed pod and direction.", []string{"namespace", "pod", "direction"}, nil)
	clusterDesc = prometheus.NewDesc("trireme_netpol_cluster_policy_packets_total", "New connections' packets a ClusterNetworkPolicy rule matched, per policy, direction, rule index and action (Accept, Deny, Pass).", []string{"policy", "direction", "rule", "action"}, nil)
	unknownDesc = prometheus.NewDesc("trireme_netpol_unknown_pod_dropped_packets_total", "Packets dropped on their way to one of this node's pod addresses whose pod the agent does not know yet.", nil, nil)
	acceptsDesc = prometheus.NewDesc("trireme_netpol_accepted_packets_total", "New connections' packets a NetworkPolicy rule allowed, per policy, direction and rule index.", []string{"namespace", "policy", "direction", "rule"}, nil)
)

// NewMetrics registers the agent's metrics, Go's and the process's, and
// the packet counters read from counters at each scrape.
func NewMetrics(counters CounterSource, log logr.Logger) *Metrics {
	m := &Metrics{
		Registry: processmetrics.NewRegistry(),
		syncDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "trireme_netpol_sync_duration_seconds", Help: "Time to resolve every policy and write the table.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
		}),
		syncFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "trireme_netpol_sync_failures_total", Help: "Syncs whose table the kernel refused or that could not be written."}),
		lastSync:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "trireme_netpol_last_successful_sync_timestamp_seconds", Help: "When the table was last written."}),
		policedPods:  prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "trireme_netpol_policed_pods", Help: "Local pods a policy isolates, per direction."}, []string{"direction"}),
		rules:        prometheus.NewGauge(prometheus.GaugeOpts{Name: "trireme_netpol_rules", Help: "Rules in the table."}),
		elements:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "trireme_netpol_set_elements", Help: "Elements of the table's sets and maps."}),
		cut:          prometheus.NewCounter(prometheus.CounterOpts{Name: "trireme_netpol_connections_cut_total", Help: "Established connections deleted from conntrack because a policy change no longer allows them."}),
	}
	m.Registry.MustRegister(m.syncDuration, m.syncFailures, m.lastSync, m.policedPods, m.rules, m.elements, m.cut)
	if counters != nil {
		m.Registry.MustRegister(packetCollector{counters: counters, log: log})
	}
	return m
}

func (m *Metrics) observeSync(took time.Duration, err error, res *policy.Resolved, want *ruleset.Objects) {
	if m == nil {
		return
	}
	m.syncDuration.Observe(took.Seconds())
	if err != nil {
		m.syncFailures.Inc()
		return
	}
	m.lastSync.SetToCurrentTime()
	var in, out float64
	for _, p := range res.Pods {
		if p.IngressIsolated {
			in++
		}
		if p.EgressIsolated {
			out++
		}
	}
	m.policedPods.WithLabelValues(string(policy.Ingress)).Set(in)
	m.policedPods.WithLabelValues(string(policy.Egress)).Set(out)
	rules, elements := want.Size()
	m.rules.Set(float64(rules))
	m.elements.Set(float64(elements))
}

func (m *Metrics) observeCut(n uint) {
	if m != nil {
		m.cut.Add(float64(n))
	}
}

// packetCollector turns the table's named counters into packet counts.
type packetCollector struct {
	counters CounterSource
	log      logr.Logger
}

func (c packetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- dropsDesc
	ch <- acceptsDesc
	ch <- unknownDesc
	ch <- clusterDesc
}

func (c packetCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counts, err := c.counters(ctx)
	if err != nil {
		c.log.Error(err, "Cannot read the table's counters")
		return
	}
	for name, n := range counts {
		if name == ruleset.UnknownPodDrops {
			ch <- prometheus.MustNewConstMetric(unknownDesc, prometheus.CounterValue, float64(n))
			continue
		}
		kind, id, ok := ruleset.CounterID(name)
		if !ok {
			continue
		}
		parts := strings.Split(id, "/")
		switch {
		case kind == "cnp" && len(parts) == 4:
			ch <- prometheus.MustNewConstMetric(clusterDesc, prometheus.CounterValue, float64(n), parts...)
		case kind == "accept" && len(parts) == 4:
			ch <- prometheus.MustNewConstMetric(acceptsDesc, prometheus.CounterValue, float64(n), parts...)
		case strings.HasPrefix(kind, "drop-") && len(parts) == 2:
			ch <- prometheus.MustNewConstMetric(dropsDesc, prometheus.CounterValue, float64(n), parts[0], parts[1], strings.TrimPrefix(kind, "drop-"))
		}
	}
}
