package server

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The metric families of upstream's /metrics/resource (what
// metrics-server scrapes), without a namespace as upstream has them.
var (
	nodeCPUDesc        = prometheus.NewDesc("node_cpu_usage_seconds_total", "Cumulative cpu time consumed by the node in core-seconds", nil, nil)
	nodeMemDesc        = prometheus.NewDesc("node_memory_working_set_bytes", "Current working set of the node in bytes", nil, nil)
	podCPUDesc         = prometheus.NewDesc("pod_cpu_usage_seconds_total", "Cumulative cpu time consumed by the pod in core-seconds", []string{"pod", "namespace"}, nil)
	podMemDesc         = prometheus.NewDesc("pod_memory_working_set_bytes", "Current working set of the pod in bytes", []string{"pod", "namespace"}, nil)
	containerCPUDesc   = prometheus.NewDesc("container_cpu_usage_seconds_total", "Cumulative cpu time consumed by the container in core-seconds", []string{"container", "pod", "namespace"}, nil)
	containerMemDesc   = prometheus.NewDesc("container_memory_working_set_bytes", "Current working set of the container in bytes", []string{"container", "pod", "namespace"}, nil)
	containerStartDesc = prometheus.NewDesc("container_start_time_seconds", "Start time of the container since unix epoch in seconds", []string{"container", "pod", "namespace"}, nil)
	scrapeErrorDesc    = prometheus.NewDesc("scrape_error", "1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
)

// resourceCollector turns the stats summary into /metrics/resource at
// scrape time, each sample stamped with the time the runtime measured it.
type resourceCollector struct {
	summary func(context.Context) (*statsv1alpha1.Summary, error)
	log     logr.Logger
}

func (c resourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{nodeCPUDesc, nodeMemDesc, podCPUDesc, podMemDesc, containerCPUDesc, containerMemDesc, containerStartDesc, scrapeErrorDesc} {
		ch <- d
	}
}

func (c resourceCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sum, err := c.summary(ctx)
	if err != nil {
		c.log.Error(err, "Resource metrics scrape failed")
		ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, 1)
		return
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, 0)
	emit := func(d *prometheus.Desc, t metav1.Time, v *uint64, scale float64, labels ...string) {
		if v == nil {
			return
		}
		ch <- prometheus.NewMetricWithTimestamp(t.Time, prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(*v)*scale, labels...))
	}
	emitGauge := func(d *prometheus.Desc, t metav1.Time, v *uint64, labels ...string) {
		if v == nil {
			return
		}
		ch <- prometheus.NewMetricWithTimestamp(t.Time, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(*v), labels...))
	}
	if n := sum.Node.CPU; n != nil {
		emit(nodeCPUDesc, n.Time, n.UsageCoreNanoSeconds, 1e-9)
	}
	if n := sum.Node.Memory; n != nil {
		emitGauge(nodeMemDesc, n.Time, n.WorkingSetBytes)
	}
	for _, p := range sum.Pods {
		if p.CPU != nil {
			emit(podCPUDesc, p.CPU.Time, p.CPU.UsageCoreNanoSeconds, 1e-9, p.PodRef.Name, p.PodRef.Namespace)
		}
		if p.Memory != nil {
			emitGauge(podMemDesc, p.Memory.Time, p.Memory.WorkingSetBytes, p.PodRef.Name, p.PodRef.Namespace)
		}
		for _, ct := range p.Containers {
			// metrics-server tells a restarted container from its counter
			// going backwards by this start time.
			if !ct.StartTime.IsZero() {
				ch <- prometheus.NewMetricWithTimestamp(ct.StartTime.Time, prometheus.MustNewConstMetric(containerStartDesc, prometheus.GaugeValue, float64(ct.StartTime.UnixNano())/float64(time.Second), ct.Name, p.PodRef.Name, p.PodRef.Namespace))
			}
			if ct.CPU != nil {
				emit(containerCPUDesc, ct.CPU.Time, ct.CPU.UsageCoreNanoSeconds, 1e-9, ct.Name, p.PodRef.Name, p.PodRef.Namespace)
			}
			if ct.Memory != nil {
				emitGauge(containerMemDesc, ct.Memory.Time, ct.Memory.WorkingSetBytes, ct.Name, p.PodRef.Name, p.PodRef.Namespace)
			}
		}
	}
}

// resourceMetrics serves /metrics/resource.
func (s *server) resourceMetrics() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(resourceCollector{summary: s.summary, log: s.cfg.Log})
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// nodeCPU reads the node's cumulative busy CPU time from /proc/stat.
func nodeCPU(now metav1.Time) *statsv1alpha1.CPUStats {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return nil
	}
	v, ok := busyNanoseconds(sc.Text())
	if !ok {
		return nil
	}
	return &statsv1alpha1.CPUStats{Time: now, UsageCoreNanoSeconds: &v}
}

// busyNanoseconds sums the non-idle fields of /proc/stat's "cpu" line
// (user nice system idle iowait irq softirq steal ...), in USER_HZ ticks
// of 10 ms.
func busyNanoseconds(line string) (uint64, bool) {
	fields := strings.Fields(line)
	if len(fields) < 8 || fields[0] != "cpu" {
		return 0, false
	}
	var busy uint64
	for i, f := range fields[1:] {
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest time is already in user
			continue
		}
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, false
		}
		busy += v
	}
	return busy * uint64(10*time.Millisecond), true
}
