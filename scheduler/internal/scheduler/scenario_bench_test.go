package scheduler

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"trireme.dev/api/config/kubescheduler"
	"trireme.dev/scheduler/internal/cache"
	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugins"
	"trireme.dev/scheduler/internal/plugintest"
)

// BenchmarkScenario places a stream of pods as the schedload scenarios
// shape them over 5000 nodes in ten zones, each iteration one cycle plus
// the assume and snapshot update that follow it: the scheduler's own CPU
// per placed pod, without the apiserver. Nodes are refilled with fresh
// ones when the anti-affinity stream has used them all.
func BenchmarkScenario(b *testing.B) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "schedload"}}
	for _, sc := range []struct {
		name  string
		shape func(*v1.Pod)
	}{
		{"basic", func(*v1.Pod) {}},
		{"antiaffinity", func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{LabelSelector: sel, TopologyKey: v1.LabelHostname}}}}
		}},
		{"preferred", func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{
				Weight:     10,
				Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{"zone-0", "zone-1"}}}},
			}}}}
		}},
		{"spread", func(p *v1.Pod) {
			p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: sel}}
		}},
	} {
		b.Run(sc.name, func(b *testing.B) {
			const nodes = 5000
			var ns []*v1.Node
			for i := range nodes {
				ns = append(ns, plugintest.Node(fmt.Sprintf("node-%04d", i), "32", v1.LabelTopologyZone, fmt.Sprintf("zone-%d", i%10)))
			}
			reg := plugins.Registry()
			var enabled []string
			for _, p := range kubescheduler.DefaultPlugins().MultiPoint.Enabled {
				if _, ok := reg[p.Name]; ok && p.Name != "PrioritySort" && p.Name != "DefaultBinder" && p.Name != "SchedulingGates" {
					enabled = append(enabled, p.Name)
				}
			}
			h := plugintest.New(b, reg, enabled, nil, ns, nil)
			c := cache.New()
			for _, n := range ns {
				c.AddNode(n)
			}
			c.UpdateSnapshot(h.Snapshot)
			s := &Scheduler{snapshot: h.Snapshot, Cache: c}
			ctx := context.Background()
			i := 0
			b.ReportAllocs()
			cpu0 := cpuTime()
			b.ResetTimer()
			for b.Loop() {
				pod := plugintest.Pod(fmt.Sprintf("pod-%06d", i), "100m", "", "app", "schedload")
				i++
				sc.shape(pod)
				c.UpdateSnapshot(s.snapshot)
				host, err := s.schedulePod(ctx, h.Framework, framework.NewCycleState(), pod)
				if err != nil {
					// Every node is taken: start over on a clean cluster.
					b.StopTimer()
					c = cache.New()
					for _, n := range ns {
						c.AddNode(n)
					}
					s.Cache = c
					c.UpdateSnapshot(s.snapshot)
					b.StartTimer()
					continue
				}
				pod.Spec.NodeName = host
				if err := c.AssumePod(pod); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pods/s")
			// CPU time says more than wall time on a shared machine.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/pod")
		})
	}
}

// cpuTime is the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
