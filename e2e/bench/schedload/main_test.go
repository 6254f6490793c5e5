package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{0.5: 50 * time.Millisecond, 0.99: 99 * time.Millisecond, 1: 100 * time.Millisecond} {
		if got := percentile(d, p); got != want {
			t.Errorf("p%v = %v, want %v", p*100, got, want)
		}
	}
	if percentile(nil, 0.5) != 0 {
		t.Error("percentile of nothing is not 0")
	}
}

func TestSpreadOf(t *testing.T) {
	tests := []struct {
		name        string
		counts      map[string]int
		n           int
		lo, hi      int
		wantCVAbove float64
		wantCVBelow float64
	}{
		{name: "even", counts: map[string]int{"a": 2, "b": 2}, n: 2, lo: 2, hi: 2, wantCVAbove: -1, wantCVBelow: 1e-9},
		{name: "empty bucket counts as zero", counts: map[string]int{"a": 4}, n: 2, lo: 0, hi: 4, wantCVAbove: 0.99, wantCVBelow: 1.01},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi, cv := spreadOf(tt.counts, tt.n)
			if lo != tt.lo || hi != tt.hi || !(cv > tt.wantCVAbove && cv < tt.wantCVBelow) || math.IsNaN(cv) {
				t.Errorf("spreadOf = %d %d %v", lo, hi, cv)
			}
		})
	}
}

func TestScenarioPods(t *testing.T) {
	for scenario := range knownScenarios {
		c := config{scenario: scenario, zones: 10}
		for i := range 3 {
			p := scenarioPod(c, i)
			if p.Labels["app"] != "schedload" {
				t.Errorf("%s pod %d: label app=%q, want schedload (the watch selects it)", scenario, i, p.Labels["app"])
			}
		}
	}
	pre := scenarioPod(config{scenario: "preemption"}, 0)
	if pre.Spec.PriorityClassName != highPriority || pre.Spec.Containers[0].Resources.Requests.Cpu().String() != highCPU {
		t.Errorf("preemption pod: class %q cpu %s", pre.Spec.PriorityClassName, pre.Spec.Containers[0].Resources.Requests.Cpu())
	}
}

func TestQuality(t *testing.T) {
	tests := []struct {
		scenario string
		r        *result
		want     string
	}{
		{scenario: "antiaffinity", r: &result{pods: 2, perNode: map[string]int{"a": 1, "b": 1}}, want: "most pods on one node 1"},
		{scenario: "spread", r: &result{pods: 3, perNode: map[string]int{}, perZone: map[string]int{"zone-0": 2, "zone-1": 1}}, want: "zone skew 1"},
		{scenario: "preferred", r: &result{pods: 4, perNode: map[string]int{}, inPreferred: 3}, want: "75.0% of pods"},
	}
	for _, tt := range tests {
		c := config{scenario: tt.scenario, nodes: 2, zones: 2}
		if got := tt.r.quality(c); !strings.Contains(got, tt.want) {
			t.Errorf("%s: quality %q, want it to contain %q", tt.scenario, got, tt.want)
		}
	}
}
