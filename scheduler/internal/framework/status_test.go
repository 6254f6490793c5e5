package framework

import (
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
)

func TestFitErrorMessage(t *testing.T) {
	tests := []struct {
		name string
		err  func() *FitError
		want string
	}{
		{
			name: "per-node reasons, sorted histogram",
			err: func() *FitError {
				m := NewNodeToStatus()
				m.Set("a", fwk.NewStatus(fwk.Unschedulable, "Insufficient cpu"))
				m.Set("b", fwk.NewStatus(fwk.Unschedulable, "Insufficient cpu", "Insufficient memory"))
				m.Set("c", fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node(s) had untolerated taint {k: v}"))
				return &FitError{NumAllNodes: 3, Diagnosis: Diagnosis{NodeToStatus: m}}
			},
			want: "0/3 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint {k: v}, 2 Insufficient cpu.",
		},
		{
			name: "with preemption outcome",
			err: func() *FitError {
				m := NewNodeToStatus()
				m.Set("a", fwk.NewStatus(fwk.Unschedulable, "Insufficient cpu"))
				return &FitError{NumAllNodes: 1, Diagnosis: Diagnosis{NodeToStatus: m, PostFilterMsg: "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."}}
			},
			want: "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..",
		},
		{
			name: "PreFilter rejection",
			err: func() *FitError {
				return &FitError{NumAllNodes: 5, Diagnosis: Diagnosis{NodeToStatus: NewNodeToStatus(), PreFilterMsg: "pod affinity terms conflict"}}
			},
			want: "0/5 nodes are available: pod affinity terms conflict.",
		},
		{
			name: "nodes a PreFilter result excluded count under the absent status",
			err: func() *FitError {
				m := NewNodeToStatus()
				m.AbsentStatus = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node(s) didn't satisfy plugin(s) [NodeAffinity]")
				m.Set("a", fwk.NewStatus(fwk.Unschedulable, "Insufficient cpu"))
				return &FitError{NumAllNodes: 4, Diagnosis: Diagnosis{NodeToStatus: m}}
			},
			want: "0/4 nodes are available: 1 Insufficient cpu, 3 node(s) didn't satisfy plugin(s) [NodeAffinity].",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err().Error(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestDefaultNormalizeScore(t *testing.T) {
	scores := fwk.NodeScoreList{{Name: "a", Score: 0}, {Name: "b", Score: 5}, {Name: "c", Score: 10}}
	DefaultNormalizeScore(100, false, scores)
	if scores[0].Score != 0 || scores[1].Score != 50 || scores[2].Score != 100 {
		t.Errorf("normalized %v", scores)
	}
	DefaultNormalizeScore(100, true, scores)
	if scores[0].Score != 100 || scores[2].Score != 0 {
		t.Errorf("reversed %v", scores)
	}
}
