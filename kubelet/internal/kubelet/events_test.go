package kubelet

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critesting "k8s.io/cri-api/pkg/apis/testing"
)

// eventRuntime streams the events it is given, or answers Unimplemented
// as containerd 1.6 does.
type eventRuntime struct {
	*critesting.FakeRuntimeService
	unimplemented bool
	events        chan *runtimeapi.ContainerEventResponse
}

func (r *eventRuntime) GetContainerEvents(ctx context.Context, ch chan *runtimeapi.ContainerEventResponse, established func(runtimeapi.RuntimeService_GetContainerEventsClient)) error {
	if r.unimplemented {
		return status.Error(codes.Unimplemented, "unknown method GetContainerEvents")
	}
	established(nil)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev := <-r.events:
			ch <- ev
		}
	}
}

func TestContainerEventsWakeWorkers(t *testing.T) {
	pod := testPod("evented")
	f := newFixture(t)
	rt := &eventRuntime{FakeRuntimeService: f.runtime, events: make(chan *runtimeapi.ContainerEventResponse)}
	f.k.cfg.Runtime = rt
	w := newPodWorker(pod.UID)
	f.k.workers[pod.UID] = w
	f.k.lastSeen[pod.UID] = fingerprint([]string{sandboxEntry("s1", runtimeapi.PodSandboxState_SANDBOX_READY), containerEntry("c1", runtimeapi.ContainerState_CONTAINER_RUNNING)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { f.k.watchContainerEvents(ctx); close(done) }()
	event := func(state runtimeapi.ContainerState) *runtimeapi.ContainerEventResponse {
		return &runtimeapi.ContainerEventResponse{
			ContainerId:        "c1",
			PodSandboxStatus:   &runtimeapi.PodSandboxStatus{Id: "s1", State: runtimeapi.PodSandboxState_SANDBOX_READY, Metadata: &runtimeapi.PodSandboxMetadata{Uid: string(pod.UID)}},
			ContainersStatuses: []*runtimeapi.ContainerStatus{{Id: "c1", State: state}},
		}
	}
	rt.events <- event(runtimeapi.ContainerState_CONTAINER_EXITED)
	select {
	case <-w.wakeCh:
	case <-time.After(10 * time.Second):
		t.Fatal("a container exit did not wake the pod's worker")
	}
	if !f.k.evented.Load() {
		t.Error("the kubelet does not know the event stream is live")
	}
	// What the worker has seen wakes nothing.
	f.k.onContainerEvent(event(runtimeapi.ContainerState_CONTAINER_RUNNING))
	select {
	case <-w.wakeCh:
		t.Error("an event showing what the worker had seen woke it")
	default:
	}
	f.k.onContainerEvent(event(runtimeapi.ContainerState_CONTAINER_EXITED))
	select {
	case <-w.wakeCh:
	default:
		t.Error("a container exit did not wake the worker")
	}
	cancel()
	<-done
	if f.k.evented.Load() {
		t.Error("the stream ended but the kubelet still counts on it")
	}
}

func TestContainerEventsUnimplemented(t *testing.T) {
	f := newFixture(t)
	f.k.cfg.Runtime = &eventRuntime{FakeRuntimeService: f.runtime, unimplemented: true}
	done := make(chan struct{})
	go func() { f.k.watchContainerEvents(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("watchContainerEvents keeps trying a runtime without container events")
	}
	if f.k.evented.Load() {
		t.Error("evented without an event stream")
	}
}
