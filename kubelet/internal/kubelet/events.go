package kubelet

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"trireme.dev/kubelet/internal/podconfig"
)

// eventedRelistPeriod is how often the runtime is relisted while its
// container event stream (CRI GetContainerEvents) is live: the events
// wake pod workers at once, and the relist only catches what a stream
// might have lost. Runtimes without the RPC (containerd 1.6 answers
// Unimplemented) are relisted every RelistPeriod, as upstream's generic
// PLEG does.
const eventedRelistPeriod = 30 * time.Second

// eventStreamRetry is how long to wait before opening the event stream
// again after it broke; meanwhile the kubelet relists every RelistPeriod.
const eventStreamRetry = 5 * time.Second

// watchContainerEvents follows the runtime's container events until ctx
// ends or the runtime says it has none.
func (k *Kubelet) watchContainerEvents(ctx context.Context) {
	for ctx.Err() == nil {
		events := make(chan *runtimeapi.ContainerEventResponse, 256)
		streamCtx, cancel := context.WithCancel(ctx)
		go func() {
			for {
				select {
				case <-streamCtx.Done():
					return
				case ev := <-events:
					k.onContainerEvent(ev)
				}
			}
		}()
		err := k.cfg.Runtime.GetContainerEvents(streamCtx, events, func(runtimeapi.RuntimeService_GetContainerEventsClient) {
			k.log.Info("Following the runtime's container events", "relistPeriod", eventedRelistPeriod)
			k.evented.Store(true)
		})
		cancel()
		wasEvented := k.evented.Swap(false)
		if ctx.Err() != nil {
			return
		}
		if status.Code(err) == codes.Unimplemented {
			k.log.Info("The runtime has no container events; relisting it", "relistPeriod", k.cfg.RelistPeriod)
			return
		}
		if wasEvented {
			k.log.Info("The runtime's container event stream ended; relisting until it is back", "relistPeriod", k.cfg.RelistPeriod, "err", errString(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(eventStreamRetry):
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// onContainerEvent wakes the worker of the event's pod, unless the event
// shows what the worker has already seen (the containers it started).
func (k *Kubelet) onContainerEvent(ev *runtimeapi.ContainerEventResponse) {
	sandbox := ev.GetPodSandboxStatus()
	uid := types.UID(sandbox.GetMetadata().GetUid())
	if uid == "" {
		uid = podconfig.PodUID(sandbox.GetLabels())
	}
	if uid == "" {
		for _, c := range ev.GetContainersStatuses() {
			if uid = podconfig.PodUID(c.GetLabels()); uid != "" {
				break
			}
		}
	}
	if uid == "" {
		return
	}
	var entries []string
	if sandbox != nil {
		entries = append(entries, sandboxEntry(sandbox.Id, sandbox.State))
	}
	for _, c := range ev.GetContainersStatuses() {
		entries = append(entries, containerEntry(c.Id, c.State))
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.lastSeen[uid] == fingerprint(entries) {
		return
	}
	if w := k.workers[uid]; w != nil {
		w.wake()
	}
}
