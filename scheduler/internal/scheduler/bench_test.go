package scheduler

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"trireme.dev/api/config/kubescheduler"
	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugins"
	"trireme.dev/scheduler/internal/plugintest"
)

// BenchmarkSchedulingCycle measures one scheduling cycle (PreFilter,
// Filter, PreScore, Score, selection) with the default plugins over 500
// nodes holding 5000 pods: the scheduler's own cost per pod, without the
// apiserver.
func BenchmarkSchedulingCycle(b *testing.B) {
	const nodes, podsPerNode = 500, 10
	var ns []*v1.Node
	var ps []*v1.Pod
	for i := range nodes {
		name := fmt.Sprintf("node-%04d", i)
		ns = append(ns, plugintest.Node(name, "32", v1.LabelTopologyZone, fmt.Sprintf("zone-%d", i%10)))
		for j := range podsPerNode {
			ps = append(ps, plugintest.Pod(fmt.Sprintf("p-%d-%d", i, j), "100m", name, "app", "x"))
		}
	}
	reg := plugins.Registry()
	var enabled []string
	for _, p := range kubescheduler.DefaultPlugins().MultiPoint.Enabled {
		if _, ok := reg[p.Name]; ok && p.Name != "PrioritySort" && p.Name != "DefaultBinder" && p.Name != "SchedulingGates" {
			enabled = append(enabled, p.Name)
		}
	}
	h := plugintest.New(b, reg, enabled, nil, ns, ps)
	s := &Scheduler{snapshot: h.Snapshot}
	ctx := context.Background()
	pod := plugintest.Pod("incoming", "100m", "", "app", "x")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.schedulePod(ctx, h.Framework, framework.NewCycleState(), pod); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pods/s")
}
