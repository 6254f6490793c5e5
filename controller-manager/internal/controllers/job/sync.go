package job

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"trireme.dev/controller-manager/internal/ownership"
	"trireme.dev/controller-manager/internal/pods"
)

// syncJob counts finished pods, decides whether the Job has met its
// success or failure criteria and otherwise keeps the right pods running.
func (c *Controller) syncJob(ctx context.Context, key string, job *batchv1.Job, mine []*corev1.Pod) error {
	now := c.now()
	orig := job.Status.DeepCopy()
	if job.Status.UncountedTerminatedPods == nil {
		job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	completions := int(completionsOf(job))
	isIndexed := indexed(job)
	completed := parseIndexes(job.Status.CompletedIndexes, completions)
	failedIdx := indexSet{}
	if job.Status.FailedIndexes != nil {
		failedIdx = parseIndexes(*job.Status.FailedIndexes, completions)
	}
	suspended := ptr.Deref(job.Spec.Suspend, false)
	targeted := condition(job, batchv1.JobFailureTarget) != nil || condition(job, batchv1.JobSuccessCriteriaMet) != nil
	counted := map[types.UID]bool{}
	for _, u := range job.Status.UncountedTerminatedPods.Succeeded {
		counted[u] = true
	}
	for _, u := range job.Status.UncountedTerminatedPods.Failed {
		counted[u] = true
	}

	// Finished pods still holding the finalizer are recorded as uncounted
	// before the finalizer goes, so none is lost or counted twice.
	var release []*corev1.Pod
	var failReason, failMsg string
	newlyUncounted := false
	for _, p := range mine {
		if !slices.Contains(p.Finalizers, TrackingFinalizer) || counted[p.UID] {
			continue
		}
		idx, hasIdx := podIndex(p)
		unc := job.Status.UncountedTerminatedPods
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			if isIndexed && (!hasIdx || idx >= completions || completed[idx]) {
				release = append(release, p)
				continue
			}
			if isIndexed {
				completed[idx] = true
			}
			unc.Succeeded = append(unc.Succeeded, p.UID)
			newlyUncounted = true
		case p.Status.Phase == corev1.PodFailed || (p.DeletionTimestamp != nil && job.Spec.PodFailurePolicy == nil):
			if p.Status.Phase != corev1.PodFailed && (suspended || targeted) {
				// Pods we delete to suspend or finish the Job are not failures.
				release = append(release, p)
				continue
			}
			action, msg, matched := failurePolicyAction(job, p)
			if matched {
				switch action {
				case batchv1.PodFailurePolicyActionIgnore:
					release = append(release, p)
					continue
				case batchv1.PodFailurePolicyActionFailJob:
					if failMsg == "" {
						failReason, failMsg = ReasonPodFailurePolicy, msg
					}
				case batchv1.PodFailurePolicyActionFailIndex:
					if hasIdx {
						failedIdx[idx] = true
					}
				}
			}
			if limit := job.Spec.BackoffLimitPerIndex; limit != nil && hasIdx && action != batchv1.PodFailurePolicyActionFailIndex {
				if indexFailures(p)+1 > *limit {
					failedIdx[idx] = true
				}
			}
			unc.Failed = append(unc.Failed, p.UID)
			newlyUncounted = true
		}
	}
	if newlyUncounted {
		got, err := c.updateStatus(ctx, job)
		if err != nil {
			return err
		}
		*job = *got
		if job.Status.UncountedTerminatedPods == nil {
			job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
		}
	}
	byUID := map[types.UID]*corev1.Pod{}
	for _, p := range mine {
		byUID[p.UID] = p
	}
	unc := job.Status.UncountedTerminatedPods
	rm := slices.Clone(release)
	for _, u := range append(slices.Clone(unc.Succeeded), unc.Failed...) {
		if p, ok := byUID[u]; ok && slices.Contains(p.Finalizers, TrackingFinalizer) {
			rm = append(rm, p)
		}
	}
	rmErr := c.removeFinalizers(ctx, rm)
	if rmErr == nil {
		if isIndexed {
			job.Status.Succeeded = int32(len(completed))
			job.Status.CompletedIndexes = completed.String()
		} else {
			job.Status.Succeeded += int32(len(unc.Succeeded))
		}
		job.Status.Failed += int32(len(unc.Failed))
		job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	if job.Spec.BackoffLimitPerIndex != nil {
		job.Status.FailedIndexes = ptr.To(failedIdx.String())
	}
	succeeded := job.Status.Succeeded + int32(len(job.Status.UncountedTerminatedPods.Succeeded))
	failed := job.Status.Failed + int32(len(job.Status.UncountedTerminatedPods.Failed))
	if isIndexed {
		succeeded = int32(len(completed))
	}

	var active []*corev1.Pod
	terminating := 0
	for _, p := range mine {
		switch {
		case pods.Active(p):
			active = append(active, p)
		case !pods.Terminal(p) && p.DeletionTimestamp != nil:
			terminating++
		}
	}

	// Suspension stops the deadline clock: it restarts on resume.
	switch {
	case suspended:
		if cond := condition(job, batchv1.JobSuspended); cond == nil {
			setCondition(&job.Status, batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended", now)
			job.Status.StartTime = nil
			c.recorder.Event(job, corev1.EventTypeNormal, "Suspended", "Job suspended")
		}
	case condition(job, batchv1.JobSuspended) != nil:
		setCondition(&job.Status, batchv1.JobSuspended, corev1.ConditionFalse, "JobResumed", "Job resumed", now)
		job.Status.StartTime = ptr.To(metav1.NewTime(now))
		c.recorder.Event(job, corev1.EventTypeNormal, "Resumed", "Job resumed")
	}
	if !suspended && job.Status.StartTime == nil {
		job.Status.StartTime = ptr.To(metav1.NewTime(now))
	}

	if condition(job, batchv1.JobFailureTarget) == nil && condition(job, batchv1.JobSuccessCriteriaMet) == nil && !suspended {
		reason, msg, success := c.decide(job, failReason, failMsg, failed, succeeded, completed, failedIdx, len(active), now)
		switch {
		case reason != "" && success:
			setCondition(&job.Status, batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, reason, msg, now)
		case reason != "":
			setCondition(&job.Status, batchv1.JobFailureTarget, corev1.ConditionTrue, reason, msg, now)
		}
	}

	var manageErr error
	created, deleted := 0, 0
	failTarget, successTarget := condition(job, batchv1.JobFailureTarget), condition(job, batchv1.JobSuccessCriteriaMet)
	switch {
	case failTarget != nil || successTarget != nil:
		deleted, manageErr = c.deletePods(ctx, key, job, active)
		pending := len(active) + terminating + len(job.Status.UncountedTerminatedPods.Succeeded) + len(job.Status.UncountedTerminatedPods.Failed)
		if pending == 0 && rmErr == nil && manageErr == nil {
			if failTarget != nil {
				setCondition(&job.Status, batchv1.JobFailed, corev1.ConditionTrue, failTarget.Reason, failTarget.Message, now)
				c.recorder.Event(job, corev1.EventTypeWarning, failTarget.Reason, failTarget.Message)
			} else {
				setCondition(&job.Status, batchv1.JobComplete, corev1.ConditionTrue, successTarget.Reason, successTarget.Message, now)
				job.Status.CompletionTime = ptr.To(metav1.NewTime(now))
				c.recorder.Event(job, corev1.EventTypeNormal, "Completed", "Job completed")
			}
		}
	case suspended:
		deleted, manageErr = c.deletePods(ctx, key, job, active)
	case c.exp.Satisfied(key):
		created, deleted, manageErr = c.manage(ctx, key, job, mine, active, succeeded, failed, completed, failedIdx, now)
	}
	job.Status.Active = int32(len(active) + created - deleted)
	ready := 0
	for _, p := range active {
		if pods.Ready(p) {
			ready++
		}
	}
	job.Status.Ready = ptr.To(int32(max(ready-deleted, 0)))
	job.Status.Terminating = ptr.To(int32(terminating + deleted))

	if d := job.Spec.ActiveDeadlineSeconds; d != nil && job.Status.StartTime != nil && !finished(job) {
		left := job.Status.StartTime.Add(time.Duration(*d) * time.Second).Sub(now)
		c.loop.AddAfter(key, max(left, 0)+10*time.Millisecond)
	}
	if !equalStatus(*orig, job.Status) {
		if _, err := c.updateStatus(ctx, job); err != nil {
			return errors.Join(rmErr, manageErr, err)
		}
	}
	return errors.Join(rmErr, manageErr)
}

// decide returns the condition reason and message the Job has earned, and
// whether it is success; an empty reason means it goes on.
func (c *Controller) decide(job *batchv1.Job, failReason, failMsg string, failed, succeeded int32, completed, failedIdx indexSet, active int, now time.Time) (string, string, bool) {
	completions := int(completionsOf(job))
	switch {
	case failReason != "":
		return failReason, failMsg, false
	case job.Spec.BackoffLimitPerIndex == nil && failed > ptr.Deref(job.Spec.BackoffLimit, 6):
		return ReasonBackoffLimit, "Job has reached the specified backoff limit", false
	case job.Spec.MaxFailedIndexes != nil && int32(len(failedIdx)) > *job.Spec.MaxFailedIndexes:
		return ReasonMaxFailedIndexes, "Job has exceeded the specified maximal number of failed indexes", false
	case job.Spec.ActiveDeadlineSeconds != nil && job.Status.StartTime != nil &&
		!job.Status.StartTime.Add(time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second).After(now):
		return ReasonDeadline, "Job was active longer than specified deadline", false
	}
	if i := successPolicyMatched(job, completed); i >= 0 {
		return ReasonSuccessPolicy, fmt.Sprintf("Matched rules at index %d", i), true
	}
	if indexed(job) {
		done := len(completed)
		for i := range failedIdx {
			if !completed[i] {
				done++
			}
		}
		if done < completions {
			return "", "", false
		}
		if len(failedIdx) > 0 {
			return ReasonFailedIndexes, "Job has failed indexes", false
		}
		return ReasonCompletionsReached, "Reached expected number of succeeded pods", true
	}
	if job.Spec.Completions != nil {
		if succeeded >= *job.Spec.Completions {
			return ReasonCompletionsReached, "Reached expected number of succeeded pods", true
		}
		return "", "", false
	}
	if succeeded > 0 && active == 0 {
		return ReasonCompletionsReached, "Reached expected number of succeeded pods", true
	}
	return "", "", false
}

func indexFailures(p *corev1.Pod) int32 {
	v, err := strconv.Atoi(p.Annotations[IndexFailureAnnotation])
	if err != nil {
		return 0
	}
	return int32(v)
}

// manage creates and deletes pods toward parallelism; it returns how many
// it created and deleted.
func (c *Controller) manage(ctx context.Context, key string, job *batchv1.Job, mine, active []*corev1.Pod, succeeded, failed int32, completed, failedIdx indexSet, now time.Time) (int, int, error) {
	parallelism := int(ptr.Deref(job.Spec.Parallelism, 1))
	if indexed(job) {
		return c.manageIndexed(ctx, key, job, mine, active, completed, failedIdx, parallelism, now)
	}
	want := parallelism
	if job.Spec.Completions != nil {
		want = min(want, int(*job.Spec.Completions-succeeded))
	} else if succeeded > 0 {
		want = 0
	}
	want = max(want, 0)
	if diff := len(active) - want; diff > 0 {
		victims := append([]*corev1.Pod(nil), active...)
		pods.RankForDeletion(victims, active, now)
		n, err := c.deletePods(ctx, key, job, victims[:diff])
		return 0, n, err
	}
	n := want - len(active)
	if n == 0 {
		return 0, 0, nil
	}
	var lastFail time.Time
	for _, p := range mine {
		if p.Status.Phase == corev1.PodFailed {
			lastFail = maxTime(lastFail, finishTime(p))
		}
	}
	if wait := lastFail.Add(c.backoffDelay(failed)).Sub(now); failed > 0 && wait > 0 {
		c.loop.AddAfter(key, wait)
		return 0, 0, nil
	}
	created, err := c.createPods(ctx, key, job, make([]int, n), false)
	return created, 0, err
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (c *Controller) manageIndexed(ctx context.Context, key string, job *batchv1.Job, mine, active []*corev1.Pod, completed, failedIdx indexSet, parallelism int, now time.Time) (int, int, error) {
	completions := int(completionsOf(job))
	running := indexSet{}
	var excess, keep []*corev1.Pod
	for _, p := range active {
		idx, ok := podIndex(p)
		if !ok || idx >= completions || completed[idx] || failedIdx[idx] || running[idx] {
			excess = append(excess, p)
			continue
		}
		running[idx] = true
		keep = append(keep, p)
	}
	if over := len(keep) - parallelism; over > 0 {
		excess = append(excess, keep[len(keep)-over:]...)
		keep = keep[:len(keep)-over]
	}
	deleted, err := c.deletePods(ctx, key, job, excess)
	if err != nil {
		return 0, deleted, err
	}
	failures := map[int]int32{}
	lastFail := map[int]time.Time{}
	for _, p := range mine {
		idx, ok := podIndex(p)
		if !ok || p.Status.Phase != corev1.PodFailed {
			continue
		}
		failures[idx] = max(failures[idx], indexFailures(p)+1)
		lastFail[idx] = maxTime(lastFail[idx], finishTime(p))
	}
	var todo []int
	var retry time.Duration
	for i := 0; i < completions && len(todo) < parallelism-len(keep); i++ {
		if completed[i] || failedIdx[i] || running[i] {
			continue
		}
		if wait := lastFail[i].Add(c.backoffDelay(failures[i])).Sub(now); failures[i] > 0 && wait > 0 {
			if retry == 0 || wait < retry {
				retry = wait
			}
			continue
		}
		todo = append(todo, i)
	}
	if retry > 0 {
		c.loop.AddAfter(key, retry)
	}
	if len(todo) == 0 {
		return 0, deleted, nil
	}
	withFailures := make([]int, len(todo))
	for i, idx := range todo {
		withFailures[i] = idx<<16 | int(min(failures[idx], 0xffff))
	}
	created, err := c.createPods(ctx, key, job, withFailures, true)
	return created, deleted, err
}

// createPods makes one pod per entry of slots (for Indexed Jobs each is
// index<<16 | previous failures of that index) in slow-start batches.
func (c *Controller) createPods(ctx context.Context, key string, job *batchv1.Job, slots []int, isIndexed bool) (int, error) {
	n := min(len(slots), 500)
	c.exp.ExpectCreations(key, n)
	ref := ownership.Ref(job, Kind)
	ok, err := pods.SlowStartBatch(n, 1, func(i int) error {
		name := job.Name
		var idx, fails int
		if isIndexed {
			idx, fails = slots[i]>>16, slots[i]&0xffff
			name = fmt.Sprintf("%s-%d", job.Name, idx)
		}
		pod := pods.FromTemplate(&job.Spec.Template, name, &ref)
		pod.Finalizers = append(pod.Finalizers, TrackingFinalizer)
		if isIndexed {
			addIndex(pod, idx)
			if job.Spec.BackoffLimitPerIndex != nil {
				pod.Annotations[IndexFailureAnnotation] = strconv.Itoa(fails)
			}
		}
		created, err := c.client.CoreV1().Pods(job.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
				return nil
			}
			c.recorder.Eventf(job, corev1.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
			return err
		}
		c.recorder.Eventf(job, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: %v", created.Name)
		return nil
	})
	for range n - ok {
		c.exp.CreationObserved(key)
	}
	if err != nil {
		return ok, fmt.Errorf("create pods for job %s: %w", key, err)
	}
	return ok, nil
}

// addIndex marks pod with its completion index as upstream does: the
// annotation and label, a stable hostname and JOB_COMPLETION_INDEX.
func addIndex(pod *corev1.Pod, idx int) {
	v := strconv.Itoa(idx)
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[IndexAnnotation] = v
	pod.Labels[batchv1.JobCompletionIndexAnnotation] = v
	if pod.Spec.Hostname == "" {
		pod.Spec.Hostname = pod.GenerateName[:len(pod.GenerateName)-1]
	}
	env := corev1.EnvVar{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + IndexAnnotation + "']"},
	}}
	for i := range pod.Spec.InitContainers {
		pod.Spec.InitContainers[i].Env = append(pod.Spec.InitContainers[i].Env, env)
	}
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].Env = append(pod.Spec.Containers[i].Env, env)
	}
}

// deletePods deletes victims and returns how many it deleted.
func (c *Controller) deletePods(ctx context.Context, key string, job *batchv1.Job, victims []*corev1.Pod) (int, error) {
	if len(victims) == 0 {
		return 0, nil
	}
	keys := make([]string, len(victims))
	for i, p := range victims {
		keys[i] = pods.Key(p)
	}
	c.exp.ExpectDeletions(key, keys)
	var errs []error
	n := 0
	for _, p := range victims {
		err := c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
		if err != nil {
			c.exp.DeletionObserved(key, pods.Key(p))
			if !apierrors.IsNotFound(err) {
				c.recorder.Eventf(job, corev1.EventTypeWarning, "FailedDelete", "Error deleting: %v", err)
				errs = append(errs, fmt.Errorf("delete pod %s: %w", p.Name, err))
			}
			continue
		}
		n++
		c.recorder.Eventf(job, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted pod: %v", p.Name)
	}
	return n, errors.Join(errs...)
}
