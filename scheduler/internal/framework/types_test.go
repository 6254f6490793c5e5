package framework

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

func TestPodResource(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	req := func(cpu string) v1.ResourceRequirements {
		return v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}}
	}
	tests := []struct {
		name         string
		spec         v1.PodSpec
		cpu, nonZero int64
	}{
		{name: "no requests counts the defaults as non-zero", spec: v1.PodSpec{Containers: []v1.Container{{Name: "a"}}}, cpu: 0, nonZero: 100},
		{name: "containers add up", spec: v1.PodSpec{Containers: []v1.Container{{Name: "a", Resources: req("1")}, {Name: "b", Resources: req("500m")}}}, cpu: 1500, nonZero: 1500},
		{name: "init container maximum", spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "i", Resources: req("2")}}, Containers: []v1.Container{{Name: "a", Resources: req("1")}}}, cpu: 2000, nonZero: 2000},
		{name: "sidecars run beside the containers", spec: v1.PodSpec{InitContainers: []v1.Container{{Name: "s", RestartPolicy: &always, Resources: req("1")}}, Containers: []v1.Container{{Name: "a", Resources: req("1")}}}, cpu: 2000, nonZero: 2000},
		{name: "overhead", spec: v1.PodSpec{Overhead: v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m")}, Containers: []v1.Container{{Name: "a", Resources: req("1")}}}, cpu: 1250, nonZero: 1250},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewPodInfo(&v1.Pod{Spec: tt.spec}).CalculateResource()
			if r.Resource.GetMilliCPU() != tt.cpu || r.Non0CPU != tt.nonZero {
				t.Errorf("cpu %d non-zero %d, want %d and %d", r.Resource.GetMilliCPU(), r.Non0CPU, tt.cpu, tt.nonZero)
			}
		})
	}
}

func TestNodeInfoAddRemove(t *testing.T) {
	ni := NewNodeInfo()
	ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourcePods: resource.MustParse("10")}}})
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "p"}, Spec: v1.PodSpec{Containers: []v1.Container{{
		Name: "c", Ports: []v1.ContainerPort{{HostPort: 80, ContainerPort: 80}},
		Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), "example.com/gpu": resource.MustParse("2")}},
	}}}}
	ni.AddPodInfo(NewPodInfo(p))
	clone := ni.Clone()
	if ni.Requested.MilliCPU != 1000 || ni.Requested.ScalarResources["example.com/gpu"] != 2 || !ni.UsedPorts.CheckConflict("", "TCP", 80) {
		t.Errorf("after add: %s ports %v", ni, ni.UsedPorts)
	}
	if err := ni.RemovePod(klog.Background(), p); err != nil {
		t.Fatal(err)
	}
	if ni.Requested.MilliCPU != 0 || len(ni.Pods) != 0 || ni.UsedPorts.CheckConflict("", "TCP", 80) {
		t.Errorf("after remove: %s", ni)
	}
	if clone.Requested.MilliCPU != 1000 || len(clone.Pods) != 1 {
		t.Errorf("the clone changed with the original")
	}
}
