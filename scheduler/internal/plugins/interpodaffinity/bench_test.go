package interpodaffinity

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugintest"
)

// BenchmarkPreFilter measures PreFilter for a pod with a required zone
// affinity and a required host anti-affinity over 500 nodes holding 5000
// pods: with counts kept between cycles, the cost of finding the nodes
// unchanged.
func BenchmarkPreFilter(b *testing.B) {
	nodes, pods := plugintest.Zones(500, 10)
	h := plugintest.New(b, framework.Registry{Name: New}, []string{Name}, nil, nodes, pods)
	pod := plugintest.Pod("incoming", "100m", "", "app", "web")
	pod.Spec.Affinity = &v1.Affinity{
		PodAffinity:     &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term("zone", "app", "web")}},
		PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term(v1.LabelHostname, "app", "web")}},
	}
	h.BenchmarkPreFilter(b, pod)
}
