package noderesources

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"trireme.dev/scheduler/internal/framework"
	"trireme.dev/scheduler/internal/plugintest"
)

func TestFitFilter(t *testing.T) {
	full := plugintest.Node("full", "2")
	full.Status.Allocatable[v1.ResourcePods] = resource.MustParse("1")
	nodes := []*v1.Node{plugintest.Node("small", "1"), plugintest.Node("big", "4"), full}
	pods := []*v1.Pod{plugintest.Pod("e1", "500m", "small"), plugintest.Pod("e2", "100m", "full")}
	sidecar := plugintest.Pod("sidecar", "1", "")
	always := v1.ContainerRestartPolicyAlways
	sidecar.Spec.InitContainers = []v1.Container{{Name: "s", RestartPolicy: &always, Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}}}}
	overhead := plugintest.Pod("overhead", "3500m", "")
	overhead.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse("600m")}
	gpu := plugintest.Pod("gpu", "100m", "")
	gpu.Spec.Containers[0].Resources.Requests["example.com/gpu"] = resource.MustParse("1")

	tests := []struct {
		name string
		pod  *v1.Pod
		want map[string]string // node -> reasons joined, "" = fits
	}{
		{name: "fits everywhere with room", pod: plugintest.Pod("p", "400m", ""), want: map[string]string{"small": "", "big": "", "full": "Too many pods"}},
		{name: "insufficient cpu on the used node", pod: plugintest.Pod("p", "600m", ""), want: map[string]string{"small": "Insufficient cpu", "big": ""}},
		{name: "sidecar requests add up", pod: sidecar, want: map[string]string{"small": "Insufficient cpu", "big": ""}},
		{name: "overhead counts", pod: overhead, want: map[string]string{"big": "Insufficient cpu"}},
		{name: "extended resource missing", pod: gpu, want: map[string]string{"big": "Insufficient example.com/gpu"}},
	}
	h := plugintest.New(t, framework.Registry{FitName: NewFit}, []string{FitName}, nil, nodes, pods)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := h.Filter(t, tt.pod)
			for node, want := range tt.want {
				st := got[node]
				var reasons string
				if st != nil {
					reasons = strings.Join(st.Reasons(), ",")
				}
				if want == "" && !st.IsSuccess() || want != "" && reasons != want {
					t.Errorf("node %s: %v, want %q", node, st, want)
				}
			}
		})
	}
}

func TestFitUnresolvableWhenNoNodeIsBigEnough(t *testing.T) {
	h := plugintest.New(t, framework.Registry{FitName: NewFit}, []string{FitName}, nil, []*v1.Node{plugintest.Node("small", "1")}, nil)
	got, _ := h.Filter(t, plugintest.Pod("p", "2", ""))
	if got["small"].Code().String() != "UnschedulableAndUnresolvable" {
		t.Errorf("status %v, want UnschedulableAndUnresolvable", got["small"])
	}
}

func TestScoringStrategies(t *testing.T) {
	nodes := []*v1.Node{plugintest.Node("busy", "4"), plugintest.Node("idle", "4")}
	pods := []*v1.Pod{plugintest.Pod("e", "2", "busy")}
	rtcr := &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{
		Type:                     configv1.RequestedToCapacityRatio,
		Resources:                []configv1.ResourceSpec{{Name: "cpu", Weight: 1}},
		RequestedToCapacityRatio: &configv1.RequestedToCapacityRatioParam{Shape: []configv1.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}}},
	}}
	tests := []struct {
		name string
		args *configv1.NodeResourcesFitArgs
		want map[string]int64
	}{
		// 1 CPU more: busy 3/4 used, idle 1/4. Memory: 200Mi default of 16Gi each.
		{name: "LeastAllocated", args: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.LeastAllocated, Resources: []configv1.ResourceSpec{{Name: "cpu", Weight: 1}}}}, want: map[string]int64{"busy": 25, "idle": 75}},
		{name: "MostAllocated", args: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.MostAllocated, Resources: []configv1.ResourceSpec{{Name: "cpu", Weight: 1}}}}, want: map[string]int64{"busy": 75, "idle": 25}},
		{name: "RequestedToCapacityRatio", args: rtcr, want: map[string]int64{"busy": 75, "idle": 25}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := plugintest.New(t, framework.Registry{FitName: NewFit}, []string{FitName}, map[string]runtime.Object{FitName: tt.args}, nodes, pods)
			got := h.Score(t, plugintest.Pod("p", "1", ""))
			for n, want := range tt.want {
				if got[n] != want {
					t.Errorf("node %s score %d, want %d (all %v)", n, got[n], want, got)
				}
			}
		})
	}
}

func TestBalancedAllocation(t *testing.T) {
	if got := balancedScore([]float64{0.5, 0.5}); got != 100 {
		t.Errorf("even use scores %d, want 100", got)
	}
	if got := balancedScore([]float64{1, 0}); got != 50 {
		t.Errorf("opposite use scores %d, want 50", got)
	}
	nodes := []*v1.Node{plugintest.Node("cpu-heavy", "4"), plugintest.Node("idle", "4")}
	pods := []*v1.Pod{plugintest.Pod("e", "3", "cpu-heavy")}
	h := plugintest.New(t, framework.Registry{BalancedAllocationName: NewBalancedAllocation}, []string{BalancedAllocationName}, nil, nodes, pods)
	got := h.Score(t, plugintest.Pod("p", "500m", ""))
	if got["idle"] <= got["cpu-heavy"] {
		t.Errorf("scores %v: want the balanced node higher", got)
	}
}
