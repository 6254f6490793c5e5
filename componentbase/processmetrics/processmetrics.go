// Package processmetrics starts a component's Prometheus registry with the
// figures every process has: the Go runtime's (goroutines, heap, GC) and
// the process's (RSS, CPU seconds, open files).
package processmetrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// NewRegistry returns what a component's /metrics serves: a registry of
// its own, so that libraries cannot add to it unasked, holding the Go
// runtime's and the process's collectors and then cs.
func NewRegistry(cs ...prometheus.Collector) *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(append([]prometheus.Collector{collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})}, cs...)...)
	return r
}
