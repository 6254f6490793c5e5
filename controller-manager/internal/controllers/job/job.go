// Package job is the controller that runs Jobs to completion: it keeps
// parallelism pods running (one per pending index in Indexed mode), retries
// failures with exponential back-off up to backoffLimit (or
// backoffLimitPerIndex), applies podFailurePolicy and successPolicy,
// enforces activeDeadlineSeconds and suspend, and counts every finished pod
// exactly once through the batch.kubernetes.io/job-tracking finalizer and
// status.uncountedTerminatedPods. A Job ends as upstream's does: the
// FailureTarget or SuccessCriteriaMet condition first, then, once its pods
// are gone, Failed or Complete.
package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	batchinformers "k8s.io/client-go/informers/batch/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/expectations"
	"trireme.dev/controller-manager/internal/ownership"
	"trireme.dev/controller-manager/internal/pods"
	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "job"

// Kind is the Job kind.
var Kind = batchv1.SchemeGroupVersion.WithKind("Job")

// Labels, annotations and reasons as upstream spells them.
const (
	TrackingFinalizer        = batchv1.JobTrackingFinalizer
	IndexAnnotation          = batchv1.JobCompletionIndexAnnotation
	IndexFailureAnnotation   = "batch.kubernetes.io/job-index-failure-count"
	controllerName           = "kubernetes.io/job-controller"
	ReasonBackoffLimit       = "BackoffLimitExceeded"
	ReasonDeadline           = "DeadlineExceeded"
	ReasonPodFailurePolicy   = "PodFailurePolicy"
	ReasonMaxFailedIndexes   = "MaxFailedIndexesExceeded"
	ReasonFailedIndexes      = "FailedIndexes"
	ReasonSuccessPolicy      = "SuccessPolicy"
	ReasonCompletionsReached = "CompletionsReached"
)

// DefaultBackoff and MaxBackoff bound the delay before a failed pod is
// replaced: DefaultBackoff doubled per failure, at most MaxBackoff.
const (
	DefaultBackoff = 10 * time.Second
	MaxBackoff     = 10 * time.Minute
)

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client creates and deletes pods, removes their tracking finalizers
	// and writes Job status.
	Client kubernetes.Interface
	// Jobs and Pods are the shared informers; New registers its handlers
	// on both.
	Jobs batchinformers.JobInformer
	Pods coreinformers.PodInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Controller is the job controller.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	jobs     batchlisters.JobLister
	pods     corelisters.PodLister
	exp      *expectations.Store
	loop     *worker.Loop
	synced   []cache.InformerSynced
	now      func() time.Time
	backoff  time.Duration
}

// orphanPrefix marks queue keys of pods that carry the tracking finalizer
// but no Job counts any more: their Job is gone or finished, or released
// them.
const orphanPrefix = "pod:"

// New returns the controller.
func New(o Options) (*Controller, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Controller{
		client: o.Client, recorder: o.Recorder,
		jobs: o.Jobs.Lister(), pods: o.Pods.Lister(),
		exp:     expectations.New(),
		synced:  []cache.InformerSynced{o.Jobs.Informer().HasSynced, o.Pods.Informer().HasSynced},
		now:     o.Now,
		backoff: DefaultBackoff,
	}
	c.loop = worker.New(Name, c.sync)
	if _, err := o.Jobs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
		DeleteFunc: func(obj any) {
			if j, ok := worker.ObjectAs[*batchv1.Job](obj); ok {
				c.exp.Delete(j.Namespace + "/" + j.Name)
			}
			c.loop.AddObject(obj)
		},
	}); err != nil {
		return nil, fmt.Errorf("watch jobs: %w", err)
	}
	if _, err := o.Pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.podChanged(obj, true, false) },
		UpdateFunc: func(oldObj, obj any) {
			// A pod whose controller changed (orphaned, or taken by another
			// owner) leaves its former Job a pod short.
			if controllerUID(oldObj) != "" && controllerUID(oldObj) != controllerUID(obj) {
				c.podChanged(oldObj, false, false)
			}
			c.podChanged(obj, false, false)
		},
		DeleteFunc: func(obj any) { c.podChanged(obj, false, true) },
	}); err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

func (c *Controller) podChanged(obj any, added, deleted bool) {
	pod, ok := worker.ObjectAs[*corev1.Pod](obj)
	if !ok {
		return
	}
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		c.orphanChanged(pod, deleted)
		return
	}
	if ref.Kind != Kind.Kind || ref.APIVersion != Kind.GroupVersion().String() {
		return
	}
	j, err := c.jobs.Jobs(pod.Namespace).Get(ref.Name)
	if err != nil || j.UID != ref.UID {
		if !deleted && slices.Contains(pod.Finalizers, TrackingFinalizer) {
			c.loop.Add(orphanPrefix + pods.Key(pod))
		}
		return
	}
	key := j.Namespace + "/" + j.Name
	switch {
	case added && pod.DeletionTimestamp == nil:
		c.exp.CreationObserved(key)
	case deleted || pod.DeletionTimestamp != nil:
		c.exp.DeletionObserved(key, pods.Key(pod))
	}
	c.loop.Add(key)
}

// controllerUID is the UID of the controller of pod obj, or "".
func controllerUID(obj any) types.UID {
	if pod, ok := obj.(*corev1.Pod); ok {
		if ref := metav1.GetControllerOfNoCopy(pod); ref != nil {
			return ref.UID
		}
	}
	return ""
}

// orphanChanged handles a pod without a controller: its tracking
// finalizer, if any, is left over from a Job that released it or is gone,
// and the Jobs whose selector matches it may adopt it.
func (c *Controller) orphanChanged(pod *corev1.Pod, deleted bool) {
	if deleted {
		return
	}
	if slices.Contains(pod.Finalizers, TrackingFinalizer) {
		c.loop.Add(orphanPrefix + pods.Key(pod))
	}
	if pod.DeletionTimestamp != nil {
		return
	}
	jobs, err := c.jobs.Jobs(pod.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, j := range jobs {
		sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
		if err == nil && !sel.Empty() && sel.Matches(labels.Set(pod.Labels)) {
			c.loop.Add(j.Namespace + "/" + j.Name)
		}
	}
}

func completionsOf(j *batchv1.Job) int32 {
	if j.Spec.Completions == nil {
		return 1
	}
	return *j.Spec.Completions
}

func indexed(j *batchv1.Job) bool {
	return j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion
}

func podIndex(p *corev1.Pod) (int, bool) {
	v, ok := p.Annotations[IndexAnnotation]
	if !ok {
		v, ok = p.Labels[batchv1.JobCompletionIndexAnnotation]
	}
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(v)
	return i, err == nil && i >= 0
}

func condition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == t && j.Status.Conditions[i].Status == corev1.ConditionTrue {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

func finished(j *batchv1.Job) bool {
	return condition(j, batchv1.JobComplete) != nil || condition(j, batchv1.JobFailed) != nil
}

// setCondition sets condition t on s; an unchanged status keeps its times.
func setCondition(s *batchv1.JobStatus, t batchv1.JobConditionType, status corev1.ConditionStatus, reason, msg string, now time.Time) {
	for i := range s.Conditions {
		c := &s.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status == status && c.Reason == reason && c.Message == msg {
			return
		}
		if c.Status != status {
			c.LastTransitionTime = metav1.NewTime(now)
		}
		c.Status, c.Reason, c.Message, c.LastProbeTime = status, reason, msg, metav1.NewTime(now)
		return
	}
	s.Conditions = append(s.Conditions, batchv1.JobCondition{Type: t, Status: status, Reason: reason, Message: msg,
		LastProbeTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)})
}

func (c *Controller) sync(ctx context.Context, key string) error {
	if podKey, ok := stringsCutPrefix(key, orphanPrefix); ok {
		return c.releaseOrphan(ctx, podKey)
	}
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.jobs.Jobs(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.exp.Delete(key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get job %s: %w", key, err)
	}
	if m := cached.Spec.ManagedBy; m != nil && *m != controllerName {
		return nil
	}
	job := cached.DeepCopy()
	selector, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil || selector.Empty() {
		c.recorder.Eventf(job, corev1.EventTypeWarning, "InvalidSelector", "Invalid selector: %v", err)
		return nil
	}
	all, err := c.pods.Pods(namespace).List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list pods: %w", err)
	}
	claimer := &ownership.Claimer{
		Owner: job, Kind: Kind, Selector: selector,
		Patch:      c.patchPod,
		Finalizers: []string{TrackingFinalizer},
		CanAdopt: ownership.RecheckOwner(job.UID, func(ctx context.Context) (metav1.Object, error) {
			return c.client.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
		}),
	}
	mine, err := ownership.Claim(ctx, claimer, all)
	if err != nil {
		return fmt.Errorf("claim pods of job %s: %w", key, err)
	}
	if finished(job) {
		return c.removeFinalizers(ctx, withFinalizer(mine))
	}
	return c.syncJob(ctx, key, job, mine)
}

func stringsCutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return s, false
}

// releaseOrphan removes the tracking finalizer of a pod no running Job
// controls, so that the pod can be deleted.
func (c *Controller) releaseOrphan(ctx context.Context, podKey string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(podKey)
	if err != nil {
		return nil
	}
	pod, err := c.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !slices.Contains(pod.Finalizers, TrackingFinalizer) {
		return nil
	}
	if ref := metav1.GetControllerOf(pod); ref != nil {
		if ref.Kind != Kind.Kind || ref.APIVersion != Kind.GroupVersion().String() {
			return nil
		}
		if j, err := c.jobs.Jobs(ns).Get(ref.Name); err == nil && j.UID == ref.UID && !finished(j) {
			return nil
		}
	}
	// The resource version makes the patch fail if a Job adopted the pod
	// since the cache saw it, instead of taking its new finalizer away.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion":                     pod.ResourceVersion,
		"$deleteFromPrimitiveList/finalizers": []string{TrackingFinalizer},
	}})
	if err != nil {
		return err
	}
	err = c.patchPod(ctx, ns, name, patch)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove finalizer of pod %s: %w", podKey, err)
	}
	return nil
}

func (c *Controller) patchPod(ctx context.Context, namespace, name string, patch []byte) error {
	_, err := c.client.CoreV1().Pods(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return err
}

func withFinalizer(list []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range list {
		if slices.Contains(p.Finalizers, TrackingFinalizer) {
			out = append(out, p)
		}
	}
	return out
}

var removeFinalizerPatch = []byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["` + TrackingFinalizer + `"]}}`)

// removeFinalizers takes the tracking finalizer off list; pods already gone
// count as done.
func (c *Controller) removeFinalizers(ctx context.Context, list []*corev1.Pod) error {
	var errs []error
	for _, p := range list {
		err := c.patchPod(ctx, p.Namespace, p.Name, removeFinalizerPatch)
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove finalizer of pod %s: %w", p.Name, err))
		}
	}
	return errors.Join(errs...)
}

// backoffDelay is how long after the last failure a replacement waits.
func (c *Controller) backoffDelay(failures int32) time.Duration {
	if failures <= 0 {
		return 0
	}
	d := float64(c.backoff) * math.Pow(2, float64(failures-1))
	return time.Duration(min(d, float64(MaxBackoff)))
}

func finishTime(p *corev1.Pod) time.Time {
	var t time.Time
	for _, cs := range append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...) {
		if term := cs.State.Terminated; term != nil && term.FinishedAt.After(t) {
			t = term.FinishedAt.Time
		}
	}
	if t.IsZero() && p.DeletionTimestamp != nil {
		t = p.DeletionTimestamp.Time
	}
	if t.IsZero() {
		for _, c := range p.Status.Conditions {
			if c.LastTransitionTime.After(t) {
				t = c.LastTransitionTime.Time
			}
		}
	}
	if t.IsZero() {
		t = p.CreationTimestamp.Time
	}
	return t
}

func (c *Controller) updateStatus(ctx context.Context, job *batchv1.Job) (*batchv1.Job, error) {
	got, err := c.client.BatchV1().Jobs(job.Namespace).UpdateStatus(ctx, job, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("update status of job %s/%s: %w", job.Namespace, job.Name, err)
	}
	return got, nil
}

func equalStatus(a, b batchv1.JobStatus) bool { return apiequality.Semantic.DeepEqual(a, b) }
