package kubelet

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"trireme.dev/kubelet/internal/podcgroup"
	"trireme.dev/kubelet/internal/podconfig"
)

// In-place resize, as upstream's kubelet does it: a change of a running
// pod's container resources is first allocated (it must fit the node
// beside the other pods' allocations, or it stays pending as Deferred),
// then actuated: each running container gets its new cgroup values
// through the CRI's UpdateContainerResources, or is restarted with them
// when its resizePolicy says RestartContainer for a resource that
// changed. The status reports what is allocated (allocatedResources) and
// what each container runs with (resources), and the PodResizePending and
// PodResizeInProgress conditions while either differs from the spec.
//
// The allocation and what each container was given live in the worker,
// not in a checkpoint: after a restart the kubelet takes the pod's spec as
// allocated and applies it again in place (UpdateContainerResources is
// idempotent), so a RestartContainer resize made while it was down is
// applied without the restart.

// resizeState is one pod's resize bookkeeping, kept by its worker.
type resizeState struct {
	// allocated are the resources the kubelet accepted, by container
	// name (init and app containers); nil before the pod's first sync.
	allocated map[string]corev1.ResourceRequirements
	// actuated are the resources each container instance runs with, by
	// container ID.
	actuated map[string]corev1.ResourceRequirements
	// pending is the PodResizePending condition, nil without one.
	pending *corev1.PodCondition
	// progressGen is the generation whose resize is being actuated, 0
	// when none is; progressErr the last actuation's failure.
	progressGen int64
	progressErr string
	// podCgroup are the values last written to the pod's cgroup, nil
	// before the first write.
	podCgroup *podcgroup.Values
}

// Upstream's reasons for the resize conditions and its resize events.
const (
	reasonResizeError      = "Error"
	eventResizeStarted     = "ResizeStarted"
	eventResizeCompleted   = "ResizeCompleted"
	eventResizeDeferred    = "ResizeDeferred"
	messageResizeStarted   = "Pod resize started"
	messageResizeCompleted = "Pod resize completed"
)

// resizeRetryPeriod is how often a deferred resize is tried again.
const resizeRetryPeriod = 5 * time.Second

// resizePending says whether a resize of the pod waits for room.
func (w *podWorker) resizePending() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.resize.pending != nil
}

// containerResources are the resources of the pod's init and app
// containers, by name: what a resize may change.
func containerResources(pod *corev1.Pod) map[string]corev1.ResourceRequirements {
	out := make(map[string]corev1.ResourceRequirements, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			out[list[i].Name] = *list[i].Resources.DeepCopy()
		}
	}
	return out
}

// withResources returns pod with its containers' resources replaced by
// those of allocated that differ (pod itself when none does).
func withResources(pod *corev1.Pod, allocated map[string]corev1.ResourceRequirements) *corev1.Pod {
	out := pod
	for _, list := range []func(*corev1.Pod) []corev1.Container{
		func(p *corev1.Pod) []corev1.Container { return p.Spec.InitContainers },
		func(p *corev1.Pod) []corev1.Container { return p.Spec.Containers },
	} {
		for i, c := range list(out) {
			r, ok := allocated[c.Name]
			if !ok || apiequality.Semantic.DeepEqual(c.Resources, r) {
				continue
			}
			if out == pod {
				out = pod.DeepCopy()
			}
			list(out)[i].Resources = *r.DeepCopy()
		}
	}
	return out
}

// allocate decides on a change of the pod's container resources and
// returns the pod as allocated: with the resources the kubelet accepted,
// which the containers are started and updated with. A new pod's
// resources are allocated as they are (admission has placed it); a
// change is accepted when the pod's requests fit the node's allocatable
// beside every other pod's allocation, and is otherwise left pending
// (Deferred, with upstream's message) and looked at again on the next
// sync.
func (k *Kubelet) allocate(w *podWorker, pod *corev1.Pod) *corev1.Pod {
	want := containerResources(pod)
	w.mu.Lock()
	rs := &w.resize
	if rs.allocated == nil {
		rs.allocated = want
	}
	changed := !apiequality.Semantic.DeepEqual(rs.allocated, want)
	if !changed {
		rs.pending = nil
	}
	allocated := rs.allocated
	w.mu.Unlock()
	if !changed {
		return withResources(pod, allocated)
	}
	if msg := k.resizeMisfit(w.uid, pod); msg != "" {
		w.mu.Lock()
		first := rs.pending == nil || rs.pending.Message != msg || rs.pending.ObservedGeneration != pod.Generation
		rs.pending = &corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonDeferred, Message: msg, ObservedGeneration: pod.Generation}
		w.mu.Unlock()
		if first {
			k.event(pod, corev1.EventTypeWarning, eventResizeDeferred, fmt.Sprintf("Pod resize %s: %s", corev1.PodReasonDeferred, msg))
		}
		return withResources(pod, allocated)
	}
	w.mu.Lock()
	rs.allocated, rs.pending = want, nil
	rs.progressGen, rs.progressErr = pod.Generation, ""
	w.mu.Unlock()
	k.event(pod, corev1.EventTypeNormal, eventResizeStarted, fmt.Sprintf("%s: generation %d", messageResizeStarted, pod.Generation))
	return pod
}

// resizeMisfit says, in the words of upstream's admission, why the pod's
// requests do not fit the node beside the allocations of the other pods
// it runs; "" when they fit.
func (k *Kubelet) resizeMisfit(uid types.UID, pod *corev1.Pod) string {
	if k.cfg.Allocatable == nil {
		return ""
	}
	allocatable := k.cfg.Allocatable()
	used := corev1.ResourceList{}
	k.mu.Lock()
	for other, ow := range k.workers {
		if other == uid {
			continue
		}
		if p := ow.allocatedActive(); p != nil {
			addResources(used, resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}))
		}
	}
	k.mu.Unlock()
	requested := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		capacity, ok := allocatable[name]
		if !ok {
			continue
		}
		req, use := requested[name], used[name]
		value := func(q resource.Quantity) int64 {
			if name == corev1.ResourceCPU {
				return q.MilliValue()
			}
			return q.Value()
		}
		if value(req) > value(capacity)-value(use) {
			return fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d", name, value(req), value(use), value(capacity))
		}
	}
	return ""
}

// addResources adds each quantity of add to sum.
func addResources(sum, add corev1.ResourceList) {
	for name, q := range add {
		cur := sum[name]
		cur.Add(q)
		sum[name] = cur
	}
}

// allocatedActive returns the worker's pod, with the resources allocated
// to it, while it holds the node's resources (see active).
func (w *podWorker) allocatedActive() *corev1.Pod {
	p := w.active()
	if p == nil {
		return nil
	}
	w.mu.Lock()
	allocated := w.resize.allocated
	w.mu.Unlock()
	if allocated == nil {
		return p
	}
	return withResources(p, allocated)
}

// actuate brings a running container to the resources allocated to it
// (cs.spec's, of the allocated pod): in place through the runtime, or by
// a restart when its resizePolicy asks for one for a resource that
// changed. It reports whether it restarted the container.
func (k *Kubelet) actuate(ctx context.Context, s *podSync, cs *containerSync) (bool, error) {
	w, pod, c, cur := s.w, s.pod, cs.spec, cs.cur
	want := c.Resources
	w.mu.Lock()
	have, known := w.resize.actuated[cur.Id]
	w.mu.Unlock()
	if known && apiequality.Semantic.DeepEqual(have, want) {
		return false, nil
	}
	log := logr.FromContextOrDiscard(ctx).WithValues("container", c.Name)
	if known && restartOnResize(c, &have, &want) {
		log.Info("Container resized with RestartContainer policy, restarting")
		k.event(pod, corev1.EventTypeNormal, "Killing", fmt.Sprintf("Container %s resize requires restart, will be restarted", c.Name))
		if err := k.killContainer(ctx, pod, c, cur.Id, ptr.Deref(pod.Spec.TerminationGracePeriodSeconds, 30)); err != nil {
			return true, err
		}
		return true, k.startContainer(ctx, s, cs, podconfig.RestartCount(cur.Annotations)+1)
	}
	// Not known: the kubelet restarted since the container started, and
	// the resources are applied again as they stand.
	if err := k.cfg.Runtime.UpdateContainerResources(ctx, cur.Id, &runtimeapi.ContainerResources{Linux: podconfig.LinuxResources(c)}); err != nil {
		w.mu.Lock()
		w.resize.progressErr = err.Error()
		w.mu.Unlock()
		return false, fmt.Errorf("update resources of container %s: %w", c.Name, err)
	}
	if known {
		log.V(2).Info("Container resized in place")
	}
	w.setActuated(cur.Id, want)
	return false, nil
}

// restartOnResize says whether the change from have to want touches a
// resource whose resize policy is RestartContainer.
func restartOnResize(c *corev1.Container, have, want *corev1.ResourceRequirements) bool {
	for _, p := range c.ResizePolicy {
		if p.RestartPolicy != corev1.RestartContainer {
			continue
		}
		if !have.Requests[p.ResourceName].Equal(want.Requests[p.ResourceName]) ||
			!have.Limits[p.ResourceName].Equal(want.Limits[p.ResourceName]) {
			return true
		}
	}
	return false
}

// setActuated records the resources a container instance runs with.
func (w *podWorker) setActuated(id string, r corev1.ResourceRequirements) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.resize.actuated == nil {
		w.resize.actuated = map[string]corev1.ResourceRequirements{}
	}
	w.resize.actuated[id] = *r.DeepCopy()
}

// resizeConditions are the pod's PodResizePending and PodResizeInProgress
// conditions: pending while a resize waits for room, in progress while a
// running container's resources differ from its allocation (with the
// error that keeps them so). A resize found done is reported completed,
// once. Called with w.mu held.
func (k *Kubelet) resizeConditions(w *podWorker, pod *corev1.Pod, rt *podRuntime) []corev1.PodCondition {
	rs := &w.resize
	var out []corev1.PodCondition
	if rs.pending != nil {
		out = append(out, *rs.pending)
	}
	// Containers no longer in the runtime need no record.
	live := map[string]bool{}
	inProgress := false
	for _, c := range rt.containers {
		live[c.Id] = true
		if c.State != runtimeapi.ContainerState_CONTAINER_RUNNING || c.Labels[podconfig.LabelContainerType] == podconfig.ContainerTypeEphemeral {
			continue
		}
		if cur, _ := rt.latest(c.Labels[podconfig.LabelContainerName]); cur != c {
			continue
		}
		want, ok := rs.allocated[c.Labels[podconfig.LabelContainerName]]
		have, known := rs.actuated[c.Id]
		if ok && (!known || !apiequality.Semantic.DeepEqual(have, want)) {
			inProgress = true
		}
	}
	for id := range rs.actuated {
		if !live[id] {
			delete(rs.actuated, id)
		}
	}
	switch {
	case inProgress && rs.progressGen != 0:
		c := corev1.PodCondition{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue, ObservedGeneration: rs.progressGen}
		if rs.progressErr != "" {
			c.Reason, c.Message = reasonResizeError, rs.progressErr
		}
		out = append(out, c)
	case !inProgress && rs.progressGen != 0:
		k.event(pod, corev1.EventTypeNormal, eventResizeCompleted, fmt.Sprintf("%s: generation %d", messageResizeCompleted, rs.progressGen))
		rs.progressGen, rs.progressErr = 0, ""
	}
	return out
}

// syncPodCgroup writes the values of the pod's cgroup (with its allocated
// resources) around a sync of its containers: before it (before true),
// what holds both the containers' old and new values, so that raising a
// container's quota never exceeds its parent's; after it, the pod's own.
// Values already written are not written again; a failure is logged and
// tried again on the next sync.
func (k *Kubelet) syncPodCgroup(ctx context.Context, w *podWorker, pod *corev1.Pod, before bool) {
	if k.cfg.PodCgroups == nil || k.cfg.CgroupDriver == "systemd" {
		return
	}
	target := podcgroup.For(pod)
	w.mu.Lock()
	last := w.resize.podCgroup
	w.mu.Unlock()
	v := target
	if before && last != nil {
		v = podcgroup.Max(*last, target)
	}
	if last != nil && *last == v {
		return
	}
	if err := k.cfg.PodCgroups.Write(k.podConfig.PodCgroup(pod), v); err != nil {
		logr.FromContextOrDiscard(ctx).Error(err, "Set pod cgroup values failed")
		return
	}
	w.mu.Lock()
	w.resize.podCgroup = &v
	w.mu.Unlock()
}
