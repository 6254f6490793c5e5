package podtopologyspread

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugintest"
)

// BenchmarkPreFilter measures PreFilter for a pod spread over zones and
// hosts over 500 nodes holding 5000 pods: with counts kept between
// cycles, the cost of finding the nodes unchanged.
func BenchmarkPreFilter(b *testing.B) {
	nodes, pods := plugintest.Zones(500, 10)
	h := plugintest.New(b, framework.Registry{Name: New}, []string{Name}, nil, nodes, pods)
	pod := spread(spread(plugintest.Pod("incoming", "100m", "", "app", "web"), "zone", 1, v1.DoNotSchedule), v1.LabelHostname, 1, v1.DoNotSchedule)
	h.BenchmarkPreFilter(b, pod)
}
