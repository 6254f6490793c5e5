package kubelet

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critesting "k8s.io/cri-api/pkg/apis/testing"

	"trireme.dev/kubelet/internal/podcgroup"
)

// updateRecorder is the fake runtime, recording the resources each
// UpdateContainerResources gives.
type updateRecorder struct {
	*critesting.FakeRuntimeService
	mu      sync.Mutex
	updates map[string]*runtimeapi.LinuxContainerResources
}

func (r *updateRecorder) UpdateContainerResources(ctx context.Context, id string, res *runtimeapi.ContainerResources) error {
	r.mu.Lock()
	r.updates[id] = res.GetLinux()
	r.mu.Unlock()
	return r.FakeRuntimeService.UpdateContainerResources(ctx, id, res)
}

func resources(cpuReq, cpuLim, memReq, memLim string) corev1.ResourceRequirements {
	r := corev1.ResourceRequirements{}
	set := func(list *corev1.ResourceList, name corev1.ResourceName, v string) {
		if v == "" {
			return
		}
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[name] = resource.MustParse(v)
	}
	set(&r.Requests, corev1.ResourceCPU, cpuReq)
	set(&r.Limits, corev1.ResourceCPU, cpuLim)
	set(&r.Requests, corev1.ResourceMemory, memReq)
	set(&r.Limits, corev1.ResourceMemory, memLim)
	return r
}

func TestResize(t *testing.T) {
	restart := func(name corev1.ResourceName) []corev1.ContainerResizePolicy {
		return []corev1.ContainerResizePolicy{{ResourceName: name, RestartPolicy: corev1.RestartContainer}}
	}
	tests := []struct {
		name        string
		policy      []corev1.ContainerResizePolicy
		from, to    corev1.ResourceRequirements
		allocatable string // the node's cpu; "" leaves it unchecked
		// wantUpdate is the cgroup values given in place, nil when the
		// container is not updated in place.
		wantUpdate *runtimeapi.LinuxContainerResources
		// wantRestarts is the new instance's restart count.
		wantRestarts int32
		// wantPending is the PodResizePending message, "" for none.
		wantPending string
	}{
		{
			name: "cpu in place", from: resources("20m", "30m", "35Mi", ""), to: resources("25m", "35m", "35Mi", ""),
			wantUpdate: &runtimeapi.LinuxContainerResources{CpuShares: 25, CpuPeriod: 100000, CpuQuota: 3500},
		},
		{
			name: "memory limit in place", from: resources("20m", "", "35Mi", "45Mi"), to: resources("20m", "", "35Mi", "50Mi"),
			wantUpdate: &runtimeapi.LinuxContainerResources{CpuShares: 20, CpuPeriod: 100000, MemoryLimitInBytes: 50 << 20},
		},
		{
			name: "cpu with a memory restart policy in place", policy: restart(corev1.ResourceMemory),
			from: resources("20m", "", "35Mi", ""), to: resources("15m", "", "35Mi", ""),
			wantUpdate: &runtimeapi.LinuxContainerResources{CpuShares: 15, CpuPeriod: 100000},
		},
		{
			name: "memory request with a memory restart policy restarts", policy: restart(corev1.ResourceMemory),
			from: resources("20m", "", "35Mi", ""), to: resources("20m", "", "40Mi", ""),
			wantRestarts: 1,
		},
		{
			name: "equivalent cpu below the minimum shares", from: resources("2m", "10m", "", ""), to: resources("1m", "5m", "", ""),
			wantUpdate: &runtimeapi.LinuxContainerResources{CpuShares: 2, CpuPeriod: 100000, CpuQuota: 1000},
		},
		{
			name: "beyond the node is deferred", from: resources("20m", "", "", ""), to: resources("40m", "", "", ""), allocatable: "30m",
			wantPending: "Node didn't have enough resource: cpu, requested: 40, used: 0, capacity: 30",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testPod("resize")
			pod.Generation = 1
			pod.Spec.Containers[0].Resources = tt.from
			pod.Spec.Containers[0].ResizePolicy = tt.policy
			f := newFixture(t, pod)
			rec := &updateRecorder{FakeRuntimeService: f.runtime, updates: map[string]*runtimeapi.LinuxContainerResources{}}
			f.k.cfg.Runtime = rec
			if tt.allocatable != "" {
				f.k.cfg.Allocatable = func() corev1.ResourceList {
					return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(tt.allocatable)}
				}
			}
			w := f.syncedWorker(t, pod)
			first := f.containers("app")
			if len(first) != 1 {
				t.Fatalf("%d app containers, want 1", len(first))
			}
			checkStatusResources(t, w, tt.from, tt.from)

			resized := pod.DeepCopy()
			resized.Generation = 2
			resized.Spec.Containers[0].Resources = tt.to
			w.update(resized)
			f.sync(t, w, resized)

			got := f.containers("app")
			rec.mu.Lock()
			update := rec.updates[first[0].Id]
			rec.mu.Unlock()
			switch {
			case tt.wantUpdate != nil:
				if len(got) != 1 || update == nil || !proto.Equal(update, tt.wantUpdate) {
					t.Fatalf("%d containers, update %v; want 1 updated with %v", len(got), update, tt.wantUpdate)
				}
			case tt.wantRestarts > 0:
				if len(got) != 2 || update != nil {
					t.Fatalf("%d containers, update %v; want a restart without an update", len(got), update)
				}
			default:
				if len(got) != 1 || update != nil {
					t.Fatalf("%d containers, update %v; want the container untouched", len(got), update)
				}
			}
			st := w.current().Status
			pending := condition(st.Conditions, corev1.PodResizePending)
			if tt.wantPending != "" {
				if pending == nil || pending.Reason != corev1.PodReasonDeferred || pending.Message != tt.wantPending || pending.ObservedGeneration != 2 {
					t.Fatalf("PodResizePending %+v, want Deferred %q at generation 2", pending, tt.wantPending)
				}
				checkStatusResources(t, w, tt.from, tt.from)
				return
			}
			if pending != nil || condition(st.Conditions, corev1.PodResizeInProgress) != nil {
				t.Fatalf("resize conditions left: %+v", st.Conditions)
			}
			checkStatusResources(t, w, tt.to, tt.to)
			if rc := st.ContainerStatuses[0].RestartCount; rc != tt.wantRestarts {
				t.Errorf("restart count %d, want %d", rc, tt.wantRestarts)
			}
		})
	}
}

// checkStatusResources checks the app container's status: the resources
// it runs with and the requests allocated to it.
func checkStatusResources(t *testing.T, w *podWorker, running, allocated corev1.ResourceRequirements) {
	t.Helper()
	st := w.current().Status
	if len(st.ContainerStatuses) != 1 {
		t.Fatalf("%d container statuses", len(st.ContainerStatuses))
	}
	cs := st.ContainerStatuses[0]
	if cs.Resources == nil || !apiequality.Semantic.DeepEqual(*cs.Resources, running) {
		t.Errorf("status resources %v, want %v", cs.Resources, running)
	}
	if !apiequality.Semantic.DeepEqual(cs.AllocatedResources, allocated.Requests) {
		t.Errorf("allocatedResources %v, want %v", cs.AllocatedResources, allocated.Requests)
	}
}

func condition(conditions []corev1.PodCondition, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}

func TestResizeDeferredThenRoom(t *testing.T) {
	pod := testPod("deferred")
	pod.Generation = 1
	pod.Spec.Containers[0].Resources = resources("20m", "", "", "")
	f := newFixture(t, pod)
	cpu := "30m"
	f.k.cfg.Allocatable = func() corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
	w := f.syncedWorker(t, pod)
	resized := pod.DeepCopy()
	resized.Generation = 2
	resized.Spec.Containers[0].Resources = resources("40m", "", "", "")
	w.update(resized)
	if requeue := f.sync(t, w, resized); requeue == 0 || requeue > resizeRetryPeriod {
		t.Errorf("requeue %v while deferred, want at most %v", requeue, resizeRetryPeriod)
	}
	if condition(w.current().Status.Conditions, corev1.PodResizePending) == nil {
		t.Fatal("no PodResizePending while the node is full")
	}
	cpu = "1"
	f.sync(t, w, resized)
	st := w.current().Status
	if condition(st.Conditions, corev1.PodResizePending) != nil {
		t.Fatalf("PodResizePending left once the node has room: %+v", st.Conditions)
	}
	checkStatusResources(t, w, resized.Spec.Containers[0].Resources, resized.Spec.Containers[0].Resources)
}

func TestRestartOnResize(t *testing.T) {
	restartMemory := []corev1.ContainerResizePolicy{
		{ResourceName: corev1.ResourceCPU, RestartPolicy: corev1.NotRequired},
		{ResourceName: corev1.ResourceMemory, RestartPolicy: corev1.RestartContainer},
	}
	tests := []struct {
		name     string
		policy   []corev1.ContainerResizePolicy
		from, to corev1.ResourceRequirements
		want     bool
	}{
		{"no policy", nil, resources("1", "", "1Gi", ""), resources("2", "", "2Gi", ""), false},
		{"cpu change, memory restarts", restartMemory, resources("1", "", "1Gi", ""), resources("2", "", "1Gi", ""), false},
		{"memory request change", restartMemory, resources("1", "", "1Gi", ""), resources("1", "", "2Gi", ""), true},
		{"memory limit added", restartMemory, resources("1", "", "1Gi", ""), resources("1", "", "1Gi", "2Gi"), true},
		{"equal quantities spelt apart", restartMemory, resources("1", "", "1Gi", ""), resources("1", "", "1024Mi", ""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &corev1.Container{Name: "c", ResizePolicy: tt.policy}
			if got := restartOnResize(c, &tt.from, &tt.to); got != tt.want {
				t.Errorf("restartOnResize = %v, want %v", got, tt.want)
			}
		})
	}
}

// cgroupLog records, in order, the pod cgroup writes and container
// updates of a sync.
type cgroupLog struct {
	mu     sync.Mutex
	events []string
}

func (l *cgroupLog) add(e string) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *cgroupLog) Write(_ string, v podcgroup.Values) error {
	l.add(fmt.Sprintf("pod quota %d", v.CPUQuota))
	return nil
}

type loggingRuntime struct {
	*critesting.FakeRuntimeService
	log *cgroupLog
}

func (r loggingRuntime) UpdateContainerResources(ctx context.Context, id string, res *runtimeapi.ContainerResources) error {
	r.log.add(fmt.Sprintf("container quota %d", res.GetLinux().GetCpuQuota()))
	return r.FakeRuntimeService.UpdateContainerResources(ctx, id, res)
}

// TestPodCgroupAroundResize: the pod's cgroup is raised before its
// containers and lowered after them, as a v1 parent's quota must stay
// above its children's.
func TestPodCgroupAroundResize(t *testing.T) {
	tests := []struct {
		name     string
		from, to string
		want     []string
	}{
		{"up", "100m", "200m", []string{"pod quota 10000", "pod quota 20000", "container quota 20000"}},
		{"down", "200m", "100m", []string{"pod quota 20000", "container quota 10000", "pod quota 10000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := testPod("cgroup")
			pod.Spec.Containers[0].Resources = resources(tt.from, tt.from, "", "")
			f := newFixture(t, pod)
			log := &cgroupLog{}
			f.k.cfg.Runtime = loggingRuntime{FakeRuntimeService: f.runtime, log: log}
			f.k.cfg.PodCgroups = log
			w := f.syncedWorker(t, pod)
			resized := pod.DeepCopy()
			resized.Spec.Containers[0].Resources = resources(tt.to, tt.to, "", "")
			w.update(resized)
			f.sync(t, w, resized)
			if !slices.Equal(log.events, tt.want) {
				t.Errorf("writes %q, want %q", log.events, tt.want)
			}
		})
	}
}
