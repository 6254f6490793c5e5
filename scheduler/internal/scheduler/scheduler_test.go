package scheduler

import (
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
)

func TestNumFeasibleNodesToFind(t *testing.T) {
	tests := []struct {
		percentage, nodes, want int32
	}{
		{0, 50, 50},       // small clusters: every node
		{0, 500, 230},     // adaptive: 50 - 500/125 = 46%
		{0, 5000, 500},    // adaptive: 50 - 40 = 10%
		{0, 100000, 5000}, // adaptive floor of 5%
		{30, 1000, 300},
		{1, 1000, 100}, // never fewer than 100
		{100, 1000, 1000},
	}
	for _, tt := range tests {
		if got := numFeasibleNodesToFind(tt.percentage, tt.nodes); got != tt.want {
			t.Errorf("numFeasibleNodesToFind(%d%%, %d) = %d, want %d", tt.percentage, tt.nodes, got, tt.want)
		}
	}
}

func TestSelectHost(t *testing.T) {
	scores := []fwk.NodePluginScores{{Name: "a", TotalScore: 10}, {Name: "b", TotalScore: 30}, {Name: "c", TotalScore: 30}}
	seen := map[string]bool{}
	for range 200 {
		seen[selectHost(scores)] = true
	}
	if seen["a"] || !seen["b"] || !seen["c"] {
		t.Errorf("hosts chosen %v: want ties between b and c broken at random, never a", seen)
	}
}
