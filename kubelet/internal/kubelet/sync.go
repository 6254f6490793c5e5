package kubelet

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"trireme.dev/kubelet/internal/metrics"
	"trireme.dev/kubelet/internal/podconfig"
	"trireme.dev/kubelet/internal/podstatus"
	"trireme.dev/kubelet/internal/pullsecrets"
)

// minGracePeriod is the shortest time a container is given to stop, as
// upstream's kubelet gives it.
const minGracePeriod = 2 * time.Second

// observe reads the pod's sandboxes and containers from the runtime.
func (k *Kubelet) observe(ctx context.Context, uid types.UID) (*podRuntime, error) {
	sel := map[string]string{podconfig.LabelPodUID: string(uid)}
	sandboxes, err := k.cfg.Runtime.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list sandboxes: %w", err)
	}
	sort.Slice(sandboxes, func(i, j int) bool { return sandboxes[i].CreatedAt > sandboxes[j].CreatedAt })
	containers, err := k.cfg.Runtime.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	rt := &podRuntime{sandboxes: sandboxes}
	for _, c := range containers {
		st, err := k.cfg.Runtime.ContainerStatus(ctx, c.Id, false)
		if err != nil {
			if isNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("container %s status: %w", c.Id, err)
		}
		rt.containers = append(rt.containers, st.Status)
	}
	sort.Slice(rt.containers, func(i, j int) bool { return rt.containers[i].CreatedAt > rt.containers[j].CreatedAt })
	if len(sandboxes) > 0 {
		st, err := k.cfg.Runtime.PodSandboxStatus(ctx, sandboxes[0].Id, false)
		if err != nil && !isNotFound(err) {
			return nil, fmt.Errorf("sandbox %s status: %w", sandboxes[0].Id, err)
		}
		if st != nil {
			rt.sandboxStatus = st.Status
		}
	}
	return rt, nil
}

// syncPod drives the runtime one step towards pod (nil or removed: nothing
// runs). It returns when to sync again, and done once the pod is gone for
// good.
func (k *Kubelet) syncPod(ctx context.Context, w *podWorker, pod *corev1.Pod, removed bool) (time.Duration, bool, error) {
	log := logr.FromContextOrDiscard(ctx)
	rt, err := k.observe(ctx, w.uid)
	if err != nil {
		return 0, false, err
	}
	stepsFrom(ctx).step("observe")
	if pod == nil || removed {
		if err := k.killPod(ctx, pod, rt, nil); err != nil {
			return 0, false, err
		}
		return 0, true, k.cleanupPod(ctx, w.uid, rt)
	}
	if pod.DeletionTimestamp != nil {
		return 0, false, k.terminate(ctx, w, pod, rt)
	}
	w.mu.Lock()
	rejected := w.rejected != nil
	w.mu.Unlock()
	if rejected {
		// A pod the kubelet refused never runs: its status says why.
		return 0, false, k.writeStatus(ctx, w, pod, k.computeStatus(pod, w, rt))
	}
	if w.finished || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		// A terminal pod never runs again: stop what is left.
		if err := k.killPod(ctx, pod, rt, ptr.To[int64](0)); err != nil {
			return 0, false, err
		}
		return 0, false, nil
	}

	if evicted, err := k.syncEvicted(ctx, w, pod, rt); evicted {
		return 0, false, err
	}
	if prev := k.stoppingPredecessor(pod); prev != "" && rt.readySandbox() == nil {
		// An edited manifest replaces a static pod: the new one starts once
		// the old one has stopped, as upstream's kubelet orders them, since
		// both would hold the same ports, files and locks (a new etcd
		// beside the old one exits at once on its data directory's lock).
		logr.FromContextOrDiscard(ctx).V(2).Info("Waiting for the static pod it replaces to stop", "previous", prev)
		return predecessorPoll, false, nil
	}
	if deadline := activeDeadline(pod); !deadline.IsZero() && !time.Now().Before(deadline) {
		return 0, false, k.stopPastDeadline(ctx, w, pod, rt)
	}

	changes := &syncChanges{}
	requeue, err := k.syncRunning(withSyncChanges(ctx, changes), w, k.allocate(w, pod), rt)
	steps := stepsFrom(ctx)
	if rt2, oerr := k.observeAfter(ctx, w.uid, rt, changes, err); oerr == nil {
		rt = rt2
		k.observed(w.uid, rt)
	}
	steps.step("reobserve")
	if gerr := k.collectGarbage(ctx, rt); gerr != nil {
		log.Error(gerr, "Remove dead containers failed")
	}
	if deadline := activeDeadline(pod); !deadline.IsZero() {
		if d := time.Until(deadline); d > 0 && (requeue == 0 || d < requeue) {
			requeue = d
		}
	}
	if w.resizePending() && (requeue == 0 || requeue > resizeRetryPeriod) {
		// A deferred resize is looked at again as other pods leave room.
		requeue = resizeRetryPeriod
	}
	status := k.computeStatus(pod, w, rt)
	k.cfg.Prober.UpdatePod(pod, status)
	if status.Phase == corev1.PodSucceeded || status.Phase == corev1.PodFailed {
		w.mu.Lock()
		w.finished = true
		w.mu.Unlock()
		if kerr := k.killPod(ctx, pod, rt, ptr.To[int64](0)); kerr != nil {
			err = errors.Join(err, kerr)
		}
	}
	steps.step("computeStatus")
	if serr := k.writeStatus(ctx, w, pod, status); serr != nil {
		err = errors.Join(err, serr)
	} else {
		steps.step("writeStatus")
		k.observeStart(ctx, w, status)
	}
	return requeue, false, err
}

// terminate stops a pod being deleted within its grace period, writes its
// final status, cleans up after it and, for a pod of the API server,
// deletes it for good.
func (k *Kubelet) terminate(ctx context.Context, w *podWorker, pod *corev1.Pod, rt *podRuntime) error {
	log := logr.FromContextOrDiscard(ctx)
	grace := ptr.Deref(pod.DeletionGracePeriodSeconds, ptr.Deref(pod.Spec.TerminationGracePeriodSeconds, 30))
	if err := k.killPod(ctx, pod, rt, &grace); err != nil {
		return err
	}
	rt, err := k.observe(ctx, w.uid)
	if err != nil {
		return err
	}
	status := k.computeStatus(pod, w, rt)
	podstatus.Terminate(status, isStatic(pod))
	if err := k.writeStatus(ctx, w, pod, status); err != nil {
		log.Error(err, "Write final pod status failed")
	}
	if err := k.cleanupPod(ctx, w.uid, rt); err != nil {
		return err
	}
	if k.cfg.Client != nil && !isStatic(pod) {
		err := k.cfg.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To[int64](0),
			Preconditions:      &metav1.Preconditions{UID: &pod.UID},
		})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete terminated pod: %w", err)
		}
	}
	log.Info("Pod terminated")
	return nil
}

// stopPastDeadline stops a pod active longer than its
// activeDeadlineSeconds and marks it failed, for good.
func (k *Kubelet) stopPastDeadline(ctx context.Context, w *podWorker, pod *corev1.Pod, rt *podRuntime) error {
	logr.FromContextOrDiscard(ctx).Info("Pod exceeded its activeDeadlineSeconds; stopping it")
	const msg = "Pod was active on the node longer than the specified deadline"
	k.event(pod, corev1.EventTypeNormal, "DeadlineExceeded", msg)
	if err := k.killPod(ctx, pod, rt, pod.Spec.TerminationGracePeriodSeconds); err != nil {
		return err
	}
	w.mu.Lock()
	w.finished = true
	w.mu.Unlock()
	rt, err := k.observe(ctx, w.uid)
	if err != nil {
		return err
	}
	status := k.computeStatus(pod, w, rt)
	status.Phase = corev1.PodFailed
	status.Reason = "DeadlineExceeded"
	status.Message = msg
	return k.writeStatus(ctx, w, pod, status)
}

// observeAfter returns the pod's runtime state after a sync that found rt
// and made changes: rt itself when it changed nothing, rt with what it
// made when it only made a sandbox and started containers, and what the
// runtime lists otherwise (or when the sync failed half-way).
func (k *Kubelet) observeAfter(ctx context.Context, uid types.UID, rt *podRuntime, changes *syncChanges, syncErr error) (*podRuntime, error) {
	if syncErr == nil {
		if changes.none() {
			return rt, nil
		}
		rt2, ok, err := k.applyChanges(ctx, rt, changes)
		if err != nil {
			return nil, err
		}
		if ok {
			return rt2, nil
		}
	}
	return k.observe(ctx, uid)
}

// syncRunning makes the sandbox and containers of a pod that should run.
func (k *Kubelet) syncRunning(ctx context.Context, w *podWorker, pod *corev1.Pod, rt *podRuntime) (time.Duration, error) {
	log := logr.FromContextOrDiscard(ctx)
	sandbox := rt.readySandbox()
	if sandbox == nil {
		// Containers of a dead sandbox are killed with it: a new sandbox
		// means a new network namespace.
		for _, c := range rt.containers {
			if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				changesFrom(ctx).changed()
				if err := k.cfg.Runtime.StopContainer(ctx, c.Id, 0); err != nil && !isNotFound(err) {
					return 0, fmt.Errorf("stop container %s of dead sandbox: %w", c.Id, err)
				}
			}
		}
		if len(rt.sandboxes) > 0 && !mayRestartAfterSandbox(pod, rt) {
			return 0, nil
		}
	}
	steps := stepsFrom(ctx)
	sandboxConfig, err := k.podConfig.SandboxConfig(pod, uint32(len(rt.sandboxes)))
	if err != nil {
		return 0, err
	}
	steps.step("sandboxConfig")
	imageIDs, requeue, err := k.pullImageVolumes(ctx, w, pod, sandboxConfig)
	if err != nil {
		return requeue, err
	}
	volumePaths, err := k.cfg.Volumes.Setup(ctx, pod, imageIDs)
	if err != nil {
		k.event(pod, corev1.EventTypeWarning, "FailedMount", err.Error())
		return 5 * time.Second, fmt.Errorf("volumes: %w", err)
	}
	steps.step("volumes")
	if sandbox == nil {
		for _, s := range rt.sandboxes {
			changesFrom(ctx).changed()
			if err := k.cfg.Runtime.StopPodSandbox(ctx, s.Id); err != nil && !isNotFound(err) {
				log.Error(err, "Stop old sandbox failed", "sandbox", s.Id)
			}
		}
		// The slot is held only while the sandbox is made. Held until the
		// containers had started too (1.7 times as long in the bench),
		// eight slots let fewer than 5 pods/s through on the test
		// machines, and pods of a steady 5/s waited longer for a slot
		// than for their sandbox.
		release := k.acquireSandboxSlot(ctx, w)
		if release == nil {
			return 0, ctx.Err()
		}
		steps.step("sandboxSlot")
		id, err := k.cfg.Runtime.RunPodSandbox(ctx, sandboxConfig, runtimeHandler(pod))
		release()
		if err != nil {
			k.event(pod, corev1.EventTypeWarning, "FailedCreatePodSandBox", fmt.Sprintf("Failed to create pod sandbox: %v", err))
			return 5 * time.Second, fmt.Errorf("run pod sandbox: %w", err)
		}
		steps.step("runPodSandbox")
		log.V(2).Info("Started pod sandbox", "sandbox", id)
		k.syncPodCgroup(ctx, w, pod, true)
		defer k.syncPodCgroup(ctx, w, pod, false)
		return 0, k.startNext(ctx, &podSync{w: w, pod: pod, rt: rt, sandbox: sandboxConfig, sandboxID: id, volumePaths: volumePaths})
	}
	k.syncPodCgroup(ctx, w, pod, true)
	defer k.syncPodCgroup(ctx, w, pod, false)
	return k.syncContainers(ctx, &podSync{w: w, pod: pod, rt: rt, sandbox: sandboxConfig, sandboxID: sandbox.Id, volumePaths: volumePaths})
}

// podSync is one sync of a running pod's containers: the pod, its worker
// and runtime state, and the sandbox they run in, read by each step in
// place of a long parameter list.
type podSync struct {
	w   *podWorker
	pod *corev1.Pod
	rt  *podRuntime
	// sandbox is the sandbox's configuration, sandboxID the sandbox.
	sandbox   *runtimeapi.PodSandboxConfig
	sandboxID string
	// volumePaths are the host paths of the pod's volumes, by name.
	volumePaths map[string]string
	// podIPs are the sandbox's addresses.
	podIPs []string
}

// mayRestartAfterSandbox says whether a pod whose sandbox died gets a new
// one: not when restartPolicy Never and a container already ran.
func mayRestartAfterSandbox(pod *corev1.Pod, rt *podRuntime) bool {
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		return true
	}
	for _, c := range rt.containers {
		if c.Labels[podconfig.LabelContainerType] == podconfig.ContainerTypeRegular {
			return false
		}
	}
	return true
}

// startNext starts what comes first in a new sandbox. The containers are
// those observed before it was made (they belong to older sandboxes, and
// their restart counts and back-off carry over); only the new sandbox's
// status (its IPs) is read.
func (k *Kubelet) startNext(ctx context.Context, s *podSync) error {
	sandboxID, old := s.sandboxID, s.rt
	st, err := k.cfg.Runtime.PodSandboxStatus(ctx, sandboxID, false)
	if err != nil {
		changesFrom(ctx).changed()
		return fmt.Errorf("sandbox %s status: %w", sandboxID, err)
	}
	changesFrom(ctx).madeSandbox(st.GetStatus())
	stepsFrom(ctx).step("sandboxStatus")
	s.rt = &podRuntime{
		sandboxes:     append([]*runtimeapi.PodSandbox{{Id: sandboxID, State: st.GetStatus().GetState(), CreatedAt: st.GetStatus().GetCreatedAt()}}, old.sandboxes...),
		containers:    old.containers,
		sandboxStatus: st.GetStatus(),
	}
	_, err = k.syncContainers(ctx, s)
	return err
}

// syncContainers starts the ephemeral containers not yet started, runs
// init containers in order, then the app containers, restarting exited
// ones as the restart policy and back-off allow.
func (k *Kubelet) syncContainers(ctx context.Context, s *podSync) (time.Duration, error) {
	s.podIPs = podstatus.SandboxIPs(s.rt.sandboxStatus)
	// Ephemeral containers come first, as upstream starts them, so that a
	// pod stuck on a failing init container can still be debugged; their
	// failures hold nothing else back.
	ephemeralErr := k.startEphemeral(ctx, s)
	requeue, err := k.syncPodContainers(ctx, s)
	return requeue, errors.Join(ephemeralErr, err)
}

// startEphemeral starts each ephemeral container that never ran: they run
// once, and are never restarted.
func (k *Kubelet) startEphemeral(ctx context.Context, s *podSync) error {
	var errs []error
	for i := range s.pod.Spec.EphemeralContainers {
		ec := &s.pod.Spec.EphemeralContainers[i]
		if cur, _ := s.rt.latest(ec.Name); cur != nil {
			continue
		}
		cs := &containerSync{spec: podconfig.EphemeralContainer(ec), ctype: podconfig.ContainerTypeEphemeral, policy: corev1.RestartPolicyNever}
		if ec.TargetContainerName != "" {
			target, _ := s.rt.latest(ec.TargetContainerName)
			if target == nil {
				msg := fmt.Sprintf("unable to find target container %s", ec.TargetContainerName)
				s.w.setStartErr(ec.Name, "CreateContainerConfigError", msg)
				k.event(s.pod, corev1.EventTypeWarning, "Failed", "Error: "+msg)
				errs = append(errs, fmt.Errorf("ephemeral container %s: %s", ec.Name, msg))
				continue
			}
			cs.targetID = target.Id
		}
		if err := k.startContainer(ctx, s, cs, 0); err != nil {
			errs = append(errs, fmt.Errorf("ephemeral container %s: %w", ec.Name, err))
		}
	}
	return errors.Join(errs...)
}

// syncPodContainers runs init containers in order, then the app
// containers.
func (k *Kubelet) syncPodContainers(ctx context.Context, s *podSync) (time.Duration, error) {
	pod, rt := s.pod, s.rt
	var requeue time.Duration
	earliest := func(d time.Duration) {
		if d > 0 && (requeue == 0 || d < requeue) {
			requeue = d
		}
	}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cur, _ := rt.latest(c.Name)
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		if sidecar {
			d, err := k.ensureContainer(ctx, s, &containerSync{spec: c, ctype: podconfig.ContainerTypeInit, policy: corev1.RestartPolicyAlways, cur: cur})
			if err != nil {
				return 0, err
			}
			earliest(d)
			if cur == nil || cur.State != runtimeapi.ContainerState_CONTAINER_RUNNING || !k.statuses.Started(c, cur.Id) {
				return requeue, nil
			}
			continue
		}
		if cur != nil && cur.State == runtimeapi.ContainerState_CONTAINER_EXITED && cur.ExitCode == 0 {
			continue
		}
		policy := pod.Spec.RestartPolicy
		if policy == corev1.RestartPolicyAlways {
			policy = corev1.RestartPolicyOnFailure
		}
		d, err := k.ensureContainer(ctx, s, &containerSync{spec: c, ctype: podconfig.ContainerTypeInit, policy: policy, cur: cur})
		if err != nil {
			return 0, err
		}
		earliest(d)
		return requeue, nil
	}
	var errs []error
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cur, _ := rt.latest(c.Name)
		d, err := k.ensureContainer(ctx, s, &containerSync{spec: c, ctype: podconfig.ContainerTypeRegular, policy: pod.Spec.RestartPolicy, cur: cur})
		if err != nil {
			errs = append(errs, err)
		}
		earliest(d)
	}
	return requeue, errors.Join(errs...)
}

// containerSync is one container of a podSync to keep running.
type containerSync struct {
	spec *corev1.Container
	// ctype is podconfig.ContainerTypeInit, ContainerTypeRegular or
	// ContainerTypeEphemeral; policy the restart policy the container
	// runs under.
	ctype  string
	policy corev1.RestartPolicy
	// targetID is the container whose process namespace an ephemeral
	// container joins.
	targetID string
	// cur is the container's newest instance, nil if it never ran.
	cur *runtimeapi.ContainerStatus
}

// ensureContainer starts a container when it has never run, restarts it
// when it exited and its policy and back-off allow, and kills it when its
// liveness probe failed. It returns when to look again.
func (k *Kubelet) ensureContainer(ctx context.Context, s *podSync, cs *containerSync) (time.Duration, error) {
	w, pod, c, cur, policy := s.w, s.pod, cs.spec, cs.cur, cs.policy
	log := logr.FromContextOrDiscard(ctx).WithValues("container", c.Name)
	key := backoffKey(pod, c)
	restartCount := int32(0)
	switch {
	case cur == nil:
	case cur.State == runtimeapi.ContainerState_CONTAINER_RUNNING:
		if img, ok := cur.Annotations[podconfig.AnnotationContainerImage]; ok && img != c.Image {
			// The pod's spec changed the image (the only mutable field of a
			// container's spec): upstream restarts the container with it
			// whatever the restart policy.
			log.Info("Container image changed, restarting", "image", c.Image)
			k.event(pod, corev1.EventTypeNormal, "Killing", fmt.Sprintf("Container %s definition changed, will be restarted", c.Name))
			if err := k.killContainer(ctx, pod, c, cur.Id, ptr.Deref(pod.Spec.TerminationGracePeriodSeconds, 30)); err != nil {
				return 0, err
			}
			return 0, k.startContainer(ctx, s, cs, podconfig.RestartCount(cur.Annotations)+1)
		}
		if k.cfg.Prober.LivenessFailed(cur.Id) {
			log.Info("Container failed its liveness probe, restarting")
			k.event(pod, corev1.EventTypeNormal, "Killing", fmt.Sprintf("Container %s failed liveness probe, will be restarted", c.Name))
			grace := ptr.Deref(pod.Spec.TerminationGracePeriodSeconds, 30)
			if err := k.killContainer(ctx, pod, c, cur.Id, grace); err != nil {
				return 0, err
			}
			return time.Millisecond, nil
		}
		if _, err := k.actuate(ctx, s, cs); err != nil {
			return 0, err
		}
		return 0, nil
	case cur.State == runtimeapi.ContainerState_CONTAINER_CREATED:
		// Created but never started (the kubelet died in between).
		changesFrom(ctx).changed()
		if err := k.cfg.Runtime.RemoveContainer(ctx, cur.Id); err != nil && !isNotFound(err) {
			return 0, fmt.Errorf("remove unstarted container %s: %w", cur.Id, err)
		}
		restartCount = podconfig.RestartCount(cur.Annotations)
	default:
		exitCode := cur.ExitCode
		if policy == corev1.RestartPolicyNever || (policy == corev1.RestartPolicyOnFailure && exitCode == 0) {
			return 0, nil
		}
		restartCount = podconfig.RestartCount(cur.Annotations) + 1
		finished := time.Unix(0, cur.FinishedAt)
		if k.backoff.IsInBackOffSince(key, finished) {
			left := time.Until(finished.Add(k.backoff.Get(key)))
			w.setStartErr(c.Name, "CrashLoopBackOff", fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", k.backoff.Get(key), c.Name, pod.Name, pod.Namespace, pod.UID))
			return left + 10*time.Millisecond, nil
		}
		k.backoff.Next(key, time.Now())
	}
	return 0, k.startContainer(ctx, s, cs, restartCount)
}

func backoffKey(pod *corev1.Pod, c *corev1.Container) string {
	return fmt.Sprintf("%s/%s/%s", pod.UID, c.Name, c.Image)
}

func (w *podWorker) setStartErr(name, reason, message string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if reason == "" {
		delete(w.startErr, name)
		return
	}
	w.startErr[name] = podstatus.Waiting{Reason: reason, Message: message}
}

// pullReasons are the waiting reasons of a failed image pull.
var pullReasons = map[string]bool{"InvalidImageName": true, "ErrImageInspect": true, "ErrImageNeverPull": true, "ImagePullBackOff": true, "ErrImagePull": true}

// clearPullErr forgets the container's start error when an image pull
// set it, once the image is there.
func (w *podWorker) clearPullErr(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if pullReasons[w.startErr[name].Reason] {
		delete(w.startErr, name)
	}
}

// startContainer pulls the image as the pull policy says, creates and
// starts the container and runs its postStart hook.
func (k *Kubelet) startContainer(ctx context.Context, s *podSync, cs *containerSync, restartCount int32) error {
	w, pod, c := s.w, s.pod, cs.spec
	log := logr.FromContextOrDiscard(ctx).WithValues("container", c.Name)
	steps := stepsFrom(ctx)
	imageRef, reason, err := k.ensureImage(ctx, pod, c.Image, c.ImagePullPolicy, s.sandbox)
	if err != nil {
		w.setStartErr(c.Name, reason, err.Error())
		return err
	}
	steps.step("image")
	config, err := k.podConfig.ContainerConfig(ctx, &podconfig.Container{
		Pod: pod, PodIPs: s.podIPs, VolumePaths: s.volumePaths,
		Spec: c, Type: cs.ctype, TargetID: cs.targetID, RestartCount: restartCount, ImageRef: imageRef,
	})
	if err != nil {
		w.setStartErr(c.Name, "CreateContainerConfigError", err.Error())
		k.event(pod, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Error: %v", err))
		return fmt.Errorf("container %s config: %w", c.Name, err)
	}
	steps.step("containerConfig")
	id, err := k.cfg.Runtime.CreateContainer(ctx, s.sandboxID, config, s.sandbox)
	changes := changesFrom(ctx)
	if err != nil {
		changes.changed()
		w.setStartErr(c.Name, "CreateContainerError", err.Error())
		k.event(pod, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Error: %v", err))
		return fmt.Errorf("create container %s: %w", c.Name, err)
	}
	steps.step("createContainer")
	k.event(pod, corev1.EventTypeNormal, "Created", fmt.Sprintf("Created container %s", c.Name))
	changes.startedContainer(id)
	w.setActuated(id, c.Resources)
	if err := k.cfg.Runtime.StartContainer(ctx, id); err != nil {
		changes.changed()
		w.setStartErr(c.Name, "RunContainerError", err.Error())
		k.event(pod, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Error: %v", err))
		return fmt.Errorf("start container %s: %w", c.Name, err)
	}
	steps.step("startContainer")
	w.setStartErr(c.Name, "", "")
	k.event(pod, corev1.EventTypeNormal, "Started", fmt.Sprintf("Started container %s", c.Name))
	log.V(2).Info("Started container", "id", id, "restartCount", restartCount)
	if c.Lifecycle != nil && c.Lifecycle.PostStart != nil {
		postStart := &hook{pod: pod, c: c, id: id, handler: c.Lifecycle.PostStart, timeout: 30 * time.Second, podIPs: s.podIPs}
		if err := k.runHook(ctx, postStart); err != nil {
			k.event(pod, corev1.EventTypeWarning, "FailedPostStartHook", err.Error())
			if kerr := k.killContainer(ctx, pod, c, id, ptr.Deref(pod.Spec.TerminationGracePeriodSeconds, 30)); kerr != nil {
				return kerr
			}
			return fmt.Errorf("postStart hook of %s: %w", c.Name, err)
		}
	}
	return nil
}

// ensureImage returns the reference of image to run (or mount), pulling
// it when the pull policy says so. On failure it also returns the waiting
// reason.
func (k *Kubelet) ensureImage(ctx context.Context, pod *corev1.Pod, image string, policy corev1.PullPolicy, sc *runtimeapi.PodSandboxConfig) (string, string, error) {
	spec := &runtimeapi.ImageSpec{Image: image}
	if policy != corev1.PullAlways {
		st, err := k.cfg.Images.ImageStatus(ctx, spec, false)
		if err != nil {
			return "", "ErrImageInspect", fmt.Errorf("inspect image %q: %w", image, err)
		}
		if st.GetImage() != nil {
			return st.Image.Id, "", nil
		}
		if policy == corev1.PullNever {
			msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", image)
			k.event(pod, corev1.EventTypeWarning, "ErrImageNeverPull", msg)
			return "", "ErrImageNeverPull", errors.New(msg)
		}
	}
	key := string(pod.UID) + "/" + image
	if k.imageBO.IsInBackOffSinceUpdate(key, time.Now()) {
		//lint:ignore ST1005 upstream's kubelet words the waiting reason's message so; users grep for it
		return "", "ImagePullBackOff", fmt.Errorf("Back-off pulling image %q", image)
	}
	k.event(pod, corev1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", image))
	auths, warnings := pullsecrets.Auths(ctx, k.cfg.Client, pod, image)
	for _, w := range warnings {
		k.event(pod, corev1.EventTypeWarning, "FailedToRetrieveImagePullSecret", w)
	}
	ref, err := k.pullImage(ctx, spec, auths, sc)
	if err != nil {
		k.imageBO.Next(key, time.Now())
		msg := fmt.Sprintf("Failed to pull image %q: %v", image, err)
		k.event(pod, corev1.EventTypeWarning, "Failed", msg)
		return "", "ErrImagePull", errors.New(msg)
	}
	k.imageBO.Reset(key)
	k.event(pod, corev1.EventTypeNormal, "Pulled", fmt.Sprintf("Successfully pulled image %q", image))
	return ref, "", nil
}

// pullImageVolumes ensures the images of the pod's image volumes as their
// pull policies say, with the pod's pull secrets and back-off, as
// container images are, and returns their IDs by volume name. A volume
// that fails holds back every container, as upstream's kubelet starts none
// until all its image volumes are there: the containers mounting it wait
// with the pull's reason (ErrImagePull, ImagePullBackOff, ...), the others
// in ContainerCreating; the returned duration is when to try again.
func (k *Kubelet) pullImageVolumes(ctx context.Context, w *podWorker, pod *corev1.Pod, sc *runtimeapi.PodSandboxConfig) (map[string]string, time.Duration, error) {
	var ids map[string]string
	var errs []error
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.Image == nil {
			continue
		}
		var id, reason string
		var err error
		if v.Image.Reference == "" {
			// The apiserver refuses it; a static pod may still say it.
			reason, err = "InvalidImageName", fmt.Errorf("image volume %q has no image reference", v.Name)
			k.event(pod, corev1.EventTypeWarning, "InspectFailed", err.Error())
		} else {
			id, reason, err = k.ensureImage(ctx, pod, v.Image.Reference, imageVolumePullPolicy(v.Image), sc)
		}
		if err != nil {
			for _, c := range mountingContainers(pod, v.Name) {
				w.setStartErr(c, reason, err.Error())
			}
			errs = append(errs, fmt.Errorf("image volume %q: %w", v.Name, err))
			continue
		}
		for _, c := range mountingContainers(pod, v.Name) {
			w.clearPullErr(c)
		}
		if ids == nil {
			ids = map[string]string{}
		}
		ids[v.Name] = id
	}
	if len(errs) > 0 {
		return nil, 5 * time.Second, errors.Join(errs...)
	}
	return ids, 0, nil
}

// imageVolumePullPolicy is the volume's pull policy, defaulted as the
// apiserver defaults it (a static pod's is not): Always for a latest or
// untagged image, IfNotPresent otherwise.
func imageVolumePullPolicy(s *corev1.ImageVolumeSource) corev1.PullPolicy {
	if s.PullPolicy != "" {
		return s.PullPolicy
	}
	ref := s.Reference
	if i := strings.LastIndex(ref, "@"); i >= 0 {
		return corev1.PullIfNotPresent
	}
	name := ref[strings.LastIndex(ref, "/")+1:]
	if _, tag, ok := strings.Cut(name, ":"); !ok || tag == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// mountingContainers names the pod's containers of every kind that mount
// the volume.
func mountingContainers(pod *corev1.Pod, volume string) []string {
	var out []string
	add := func(name string, mounts []corev1.VolumeMount) {
		for _, m := range mounts {
			if m.Name == volume {
				out = append(out, name)
				return
			}
		}
	}
	for _, c := range pod.Spec.InitContainers {
		add(c.Name, c.VolumeMounts)
	}
	for _, c := range pod.Spec.Containers {
		add(c.Name, c.VolumeMounts)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		add(c.Name, c.VolumeMounts)
	}
	return out
}

// pullImage pulls with each matching credential in turn (anonymously when
// none matches), as upstream does; the last error is returned when all
// fail.
func (k *Kubelet) pullImage(ctx context.Context, spec *runtimeapi.ImageSpec, auths []*runtimeapi.AuthConfig, sc *runtimeapi.PodSandboxConfig) (string, error) {
	if len(auths) == 0 {
		return k.cfg.Images.PullImage(ctx, spec, nil, sc)
	}
	var err error
	for _, a := range auths {
		var ref string
		if ref, err = k.cfg.Images.PullImage(ctx, spec, a, sc); err == nil {
			return ref, nil
		}
	}
	return "", err
}

// killPod stops every container (preStop hooks first, in parallel, within
// the grace period) and the sandboxes. grace nil takes each container's
// pod grace period, or the minimum without a pod.
func (k *Kubelet) killPod(ctx context.Context, pod *corev1.Pod, rt *podRuntime, grace *int64) error {
	g := int64(minGracePeriod / time.Second)
	if grace != nil {
		g = *grace
	} else if pod != nil {
		g = ptr.Deref(pod.Spec.TerminationGracePeriodSeconds, 30)
	}
	errc := make(chan error, len(rt.containers))
	n := 0
	for _, cs := range rt.containers {
		if cs.State != runtimeapi.ContainerState_CONTAINER_RUNNING && cs.State != runtimeapi.ContainerState_CONTAINER_CREATED {
			continue
		}
		n++
		go func() {
			var spec *corev1.Container
			if pod != nil {
				spec = podconfig.FindContainer(pod, cs.Labels[podconfig.LabelContainerName])
			}
			errc <- k.killContainer(ctx, pod, spec, cs.Id, g)
		}()
	}
	var errs []error
	for range n {
		if err := <-errc; err != nil {
			errs = append(errs, err)
		}
	}
	for _, s := range rt.sandboxes {
		if s.State != runtimeapi.PodSandboxState_SANDBOX_READY {
			continue
		}
		if err := k.cfg.Runtime.StopPodSandbox(ctx, s.Id); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("stop sandbox %s: %w", s.Id, err))
		}
	}
	return errors.Join(errs...)
}

// killContainer runs the preStop hook, then stops the container with what
// is left of the grace period.
func (k *Kubelet) killContainer(ctx context.Context, pod *corev1.Pod, c *corev1.Container, id string, grace int64) error {
	start := time.Now()
	budget := time.Duration(grace) * time.Second
	if c != nil && c.Lifecycle != nil && c.Lifecycle.PreStop != nil && grace > 0 {
		if err := k.runHook(ctx, &hook{pod: pod, c: c, id: id, handler: c.Lifecycle.PreStop, timeout: budget}); err != nil {
			k.event(pod, corev1.EventTypeWarning, "FailedPreStopHook", err.Error())
		}
	}
	left := budget - time.Since(start)
	if left < minGracePeriod {
		left = minGracePeriod
	}
	if grace == 0 {
		left = 0
	}
	if pod != nil && c != nil {
		k.event(pod, corev1.EventTypeNormal, "Killing", fmt.Sprintf("Stopping container %s", c.Name))
	}
	changesFrom(ctx).changed()
	if err := k.cfg.Runtime.StopContainer(ctx, id, int64(left/time.Second)); err != nil && !isNotFound(err) {
		return fmt.Errorf("stop container %s: %w", id, err)
	}
	return nil
}

// cleanupPod removes the pod's stopped containers and sandboxes and its
// volumes.
func (k *Kubelet) cleanupPod(ctx context.Context, uid types.UID, rt *podRuntime) error {
	var errs []error
	for _, c := range rt.containers {
		if err := k.cfg.Runtime.RemoveContainer(ctx, c.Id); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("remove container %s: %w", c.Id, err))
		}
	}
	for _, s := range rt.sandboxes {
		if err := k.cfg.Runtime.StopPodSandbox(ctx, s.Id); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("stop sandbox %s: %w", s.Id, err))
			continue
		}
		if err := k.cfg.Runtime.RemovePodSandbox(ctx, s.Id); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("remove sandbox %s: %w", s.Id, err))
		}
	}
	if len(errs) == 0 {
		if err := k.cfg.Volumes.Teardown(ctx, uid); err != nil {
			errs = append(errs, err)
		}
		if err := k.removePodCgroups(uid); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removePodCgroups removes the pod's cgroup once its sandboxes are gone. The
// pod is gone too by then, so its QoS class is unknown: every class's place
// is tried. Under systemd the slice is systemd's to remove.
func (k *Kubelet) removePodCgroups(uid types.UID) error {
	if k.cfg.CgroupDriver == "systemd" || k.cfg.RemoveCgroups == nil {
		return nil
	}
	var paths []string
	for _, qos := range []string{"", "burstable", "besteffort"} {
		paths = append(paths, path.Join(k.cfg.CgroupParent, qos, "pod"+string(uid)))
	}
	return k.cfg.RemoveCgroups(paths...)
}

func isNotFound(err error) bool {
	return grpcstatus.Code(err) == codes.NotFound
}

// annotationConfigSource names a pod's source; static pods carry the file
// source's.
const annotationConfigSource = "kubernetes.io/config.source"

// predecessorPoll is how often a static pod waiting for the one it
// replaces looks again.
const predecessorPoll = 250 * time.Millisecond

// stoppingPredecessor returns the UID of a removed static pod of pod's name
// whose worker is still tearing it down, or "" (pod is not static, or
// replaces nothing still running).
func (k *Kubelet) stoppingPredecessor(pod *corev1.Pod) types.UID {
	if !isStatic(pod) {
		return ""
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for uid, w := range k.workers {
		if uid == pod.UID {
			continue
		}
		if p, removed := w.snapshot(); removed && p != nil && isStatic(p) && p.Namespace == pod.Namespace && p.Name == pod.Name {
			return uid
		}
	}
	return ""
}

func isStatic(pod *corev1.Pod) bool {
	s := pod.Annotations[annotationConfigSource]
	return s != "" && s != "api"
}

func runtimeHandler(pod *corev1.Pod) string {
	return ptr.Deref(pod.Spec.RuntimeClassName, "")
}

func (k *Kubelet) event(pod *corev1.Pod, typ, reason, msg string) {
	if k.cfg.Recorder != nil && pod != nil {
		k.cfg.Recorder.Event(pod, typ, reason, msg)
	}
}

// activeDeadline is when the pod must stop under activeDeadlineSeconds,
// counted from its start time; zero without one.
func activeDeadline(pod *corev1.Pod) time.Time {
	if pod.Spec.ActiveDeadlineSeconds == nil || pod.Status.StartTime == nil {
		return time.Time{}
	}
	return pod.Status.StartTime.Add(time.Duration(*pod.Spec.ActiveDeadlineSeconds) * time.Second)
}

// deadInstancesKept is how many instances of a container are kept: the
// current one and the one before, which kubectl logs --previous reads;
// upstream's MaxPerPodContainer keeps as many dead ones.
const deadInstancesKept = 2

// collectGarbage removes exited instances of each container beyond the
// newest two, and sandboxes that are neither the newest nor ready (their
// containers were stopped when the newer sandbox was made).
func (k *Kubelet) collectGarbage(ctx context.Context, rt *podRuntime) error {
	var errs []error
	seen := map[string]int{}
	for _, c := range rt.containers {
		name := c.Labels[podconfig.LabelContainerName]
		seen[name]++
		if seen[name] <= deadInstancesKept || c.State != runtimeapi.ContainerState_CONTAINER_EXITED {
			continue
		}
		if err := k.cfg.Runtime.RemoveContainer(ctx, c.Id); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("remove dead container %s: %w", c.Id, err))
		}
	}
	for i, s := range rt.sandboxes {
		if i == 0 || s.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			continue
		}
		if err := k.cfg.Runtime.RemovePodSandbox(ctx, s.Id); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("remove old sandbox %s: %w", s.Id, err))
		}
	}
	return errors.Join(errs...)
}

// observeStart records, once per pod, the time from the kubelet first
// seeing it to all its containers running, and logs its steps.
func (k *Kubelet) observeStart(ctx context.Context, w *podWorker, st *corev1.PodStatus) {
	if st.Phase != corev1.PodRunning {
		return
	}
	for _, cs := range st.ContainerStatuses {
		if cs.State.Running == nil {
			return
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.startObserved {
		return
	}
	w.startObserved = true
	took := time.Since(w.started)
	metrics.PodStartDuration.Observe(took.Seconds())
	if w.steps != nil {
		logr.FromContextOrDiscard(ctx).V(2).Info("Pod started", append([]any{"took", took.Round(time.Microsecond).String()}, w.steps.steps...)...)
		w.steps = nil
	}
}
