package kubelet

import (
	"context"
	"fmt"
	"sort"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// syncChanges records what one sync of a pod did to its runtime state, so
// that the state after the sync is known without listing the runtime
// again: most syncs change nothing, and a pod's first one makes a
// sandbox and starts containers, whose statuses are all it needs to read.
// A nil *syncChanges records nothing.
type syncChanges struct {
	// sandbox is the status of the sandbox the sync made, nil if none.
	sandbox *runtimeapi.PodSandboxStatus
	// started are the IDs of the containers the sync created, in order.
	started []string
	// other is set by any other change (a container or sandbox stopped or
	// removed, a container created but not started): the runtime must be
	// listed again.
	other bool
}

type syncChangesKey struct{}

func withSyncChanges(ctx context.Context, c *syncChanges) context.Context {
	return context.WithValue(ctx, syncChangesKey{}, c)
}

func changesFrom(ctx context.Context) *syncChanges {
	c, _ := ctx.Value(syncChangesKey{}).(*syncChanges)
	return c
}

func (c *syncChanges) madeSandbox(st *runtimeapi.PodSandboxStatus) {
	if c != nil {
		c.sandbox = st
	}
}

func (c *syncChanges) startedContainer(id string) {
	if c != nil {
		c.started = append(c.started, id)
	}
}

func (c *syncChanges) changed() {
	if c != nil {
		c.other = true
	}
}

// none says whether the sync left the runtime as it found it.
func (c *syncChanges) none() bool {
	return c.sandbox == nil && len(c.started) == 0 && !c.other
}

// apply returns the pod's runtime state after the changes, from rt (the
// state before them) and the statuses of the containers started; ok is
// false when only listing the runtime again can tell.
func (k *Kubelet) applyChanges(ctx context.Context, rt *podRuntime, c *syncChanges) (*podRuntime, bool, error) {
	if c.other {
		return nil, false, nil
	}
	out := &podRuntime{sandboxes: rt.sandboxes, containers: rt.containers, sandboxStatus: rt.sandboxStatus}
	if st := c.sandbox; st != nil {
		s := &runtimeapi.PodSandbox{Id: st.Id, Metadata: st.Metadata, State: st.State, CreatedAt: st.CreatedAt, Labels: st.Labels, Annotations: st.Annotations, RuntimeHandler: st.RuntimeHandler}
		out.sandboxes = append([]*runtimeapi.PodSandbox{s}, rt.sandboxes...)
		out.sandboxStatus = st
	}
	if len(c.started) > 0 {
		out.containers = append([]*runtimeapi.ContainerStatus(nil), rt.containers...)
		for _, id := range c.started {
			st, err := k.cfg.Runtime.ContainerStatus(ctx, id, false)
			if err != nil {
				if isNotFound(err) {
					return nil, false, nil
				}
				return nil, false, fmt.Errorf("container %s status: %w", id, err)
			}
			out.containers = append(out.containers, st.Status)
		}
		sort.SliceStable(out.containers, func(i, j int) bool { return out.containers[i].CreatedAt > out.containers[j].CreatedAt })
	}
	return out, true, nil
}
