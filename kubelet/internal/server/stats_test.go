package server

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critesting "k8s.io/cri-api/pkg/apis/testing"
)

type fakePods struct{ pods []*corev1.Pod }

func (f fakePods) Pods() []*corev1.Pod { return f.pods }
func (f fakePods) FindPod(ns, name string) *corev1.Pod {
	for _, p := range f.pods {
		if p.Namespace == ns && p.Name == name {
			return p
		}
	}
	return nil
}
func (f fakePods) Container(context.Context, *corev1.Pod, string, bool) (string, string, error) {
	return "", "", nil
}
func (f fakePods) Sandbox(context.Context, *corev1.Pod) (string, error) { return "", nil }

func TestSummary(t *testing.T) {
	rs := critesting.NewFakeRuntimeService()
	rs.SetFakeContainers([]*critesting.FakeContainer{{ContainerStatus: runtimeapi.ContainerStatus{Id: "c1", Labels: map[string]string{"io.kubernetes.pod.uid": "uid-1"}}}})
	rs.SetFakeContainerStats([]*runtimeapi.ContainerStats{{
		Attributes: &runtimeapi.ContainerAttributes{Id: "c1", Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Labels: map[string]string{"io.kubernetes.pod.uid": "uid-1"}},
		Cpu:        &runtimeapi.CpuUsage{UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: 500}},
		Memory:     &runtimeapi.MemoryUsage{WorkingSetBytes: &runtimeapi.UInt64Value{Value: 4096}},
	}})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid-1"}}
	s := &server{cfg: Config{NodeName: "node-1", Runtime: rs, Pods: fakePods{[]*corev1.Pod{pod}}, RootDir: t.TempDir()}}
	sum, err := s.summary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Node.NodeName != "node-1" || sum.Node.Memory == nil || sum.Node.Fs == nil || *sum.Node.Fs.CapacityBytes == 0 {
		t.Errorf("node stats %+v", sum.Node)
	}
	if len(sum.Pods) != 1 || len(sum.Pods[0].Containers) != 1 {
		t.Fatalf("pods %+v", sum.Pods)
	}
	ps := sum.Pods[0]
	if ps.PodRef.UID != "uid-1" || *ps.CPU.UsageCoreNanoSeconds != 500 || *ps.Memory.WorkingSetBytes != 4096 || ps.Containers[0].Name != "app" {
		t.Errorf("pod stats %+v", ps)
	}
}
