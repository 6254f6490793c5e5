package server

import (
	"context"
	"reflect"
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

func TestParseMeminfo(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		name          string
		text          string
		wantNil       bool
		ws, usage, av uint64
	}{
		{
			name:  "working set leaves out inactive page cache",
			text:  "MemTotal:       1000 kB\nMemFree:         200 kB\nMemAvailable:    700 kB\nInactive(file):  300 kB\n",
			ws:    500 * 1024,
			usage: 800 * 1024,
			av:    500 * 1024,
		},
		{
			name:  "no Inactive(file) line",
			text:  "MemTotal: 1000 kB\nMemFree: 200 kB\n",
			ws:    800 * 1024,
			usage: 800 * 1024,
			av:    200 * 1024,
		},
		{name: "MemFree missing", text: "MemTotal: 1000 kB\n", wantNil: true},
		{name: "garbage", text: "MemTotal: x kB\nMemFree\n", wantNil: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseMeminfo(tt.text, now)
			if tt.wantNil {
				if got != nil {
					t.Fatalf("parseMeminfo = %+v, want nil", got)
				}
				return
			}
			if got == nil {
				t.Fatal("parseMeminfo = nil")
			}
			if *got.WorkingSetBytes != tt.ws || *got.UsageBytes != tt.usage || *got.AvailableBytes != tt.av {
				t.Errorf("working set %d usage %d available %d; want %d %d %d", *got.WorkingSetBytes, *got.UsageBytes, *got.AvailableBytes, tt.ws, tt.usage, tt.av)
			}
		})
	}
}

func TestCurrentContainers(t *testing.T) {
	stats := func(id, uid, name string) *runtimeapi.ContainerStats {
		return &runtimeapi.ContainerStats{Attributes: &runtimeapi.ContainerAttributes{Id: id, Metadata: &runtimeapi.ContainerMetadata{Name: name}, Labels: map[string]string{"io.kubernetes.pod.uid": uid}}}
	}
	ctr := func(id string, created int64, state runtimeapi.ContainerState) *runtimeapi.Container {
		return &runtimeapi.Container{Id: id, CreatedAt: created, State: state}
	}
	tests := []struct {
		name  string
		stats []*runtimeapi.ContainerStats
		list  []*runtimeapi.Container
		want  map[string][]string // pod UID -> container IDs
	}{
		{
			name:  "one running container",
			stats: []*runtimeapi.ContainerStats{stats("a", "u1", "app")},
			list:  []*runtimeapi.Container{ctr("a", 5, runtimeapi.ContainerState_CONTAINER_RUNNING)},
			want:  map[string][]string{"u1": {"a"}},
		},
		{
			name:  "exited instance of a restarted container is dropped",
			stats: []*runtimeapi.ContainerStats{stats("old", "u1", "app"), stats("new", "u1", "app")},
			list:  []*runtimeapi.Container{ctr("old", 1, runtimeapi.ContainerState_CONTAINER_EXITED), ctr("new", 2, runtimeapi.ContainerState_CONTAINER_RUNNING)},
			want:  map[string][]string{"u1": {"new"}},
		},
		{
			name:  "two live instances: the newest wins",
			stats: []*runtimeapi.ContainerStats{stats("new", "u1", "app"), stats("old", "u1", "app")},
			list:  []*runtimeapi.Container{ctr("old", 1, runtimeapi.ContainerState_CONTAINER_RUNNING), ctr("new", 2, runtimeapi.ContainerState_CONTAINER_RUNNING)},
			want:  map[string][]string{"u1": {"new"}},
		},
		{
			name:  "stats of a container the runtime no longer lists",
			stats: []*runtimeapi.ContainerStats{stats("gone", "u1", "app"), stats("b", "u2", "side")},
			list:  []*runtimeapi.Container{ctr("b", 1, runtimeapi.ContainerState_CONTAINER_RUNNING)},
			want:  map[string][]string{"u2": {"b"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string][]string{}
			for uid, cs := range currentContainers(tt.stats, tt.list) {
				for _, c := range cs {
					got[uid] = append(got[uid], c.stats.GetAttributes().GetId())
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("currentContainers = %v, want %v", got, tt.want)
			}
		})
	}
}
