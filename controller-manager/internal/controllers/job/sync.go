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

// jobSync is one sync of a Job: the Job being brought up to date and what
// its pods say, gathered once and read by each step.
type jobSync struct {
	key  string
	job  *batchv1.Job
	mine []*corev1.Pod
	now  time.Time

	completions int
	isIndexed   bool
	suspended   bool
	// completed and failedIdx are the Indexed Job's completed and failed
	// indexes.
	completed, failedIdx indexSet
	// failReason and failMsg are set when a pod failure policy fails the
	// Job.
	failReason, failMsg string
	// release are finished pods whose finalizer goes without counting them.
	release []*corev1.Pod
	// succeeded and failed count the finished pods, uncounted ones included.
	succeeded, failed int32
	active            []*corev1.Pod
	terminating       int
}

// syncJob counts finished pods, decides whether the Job has met its
// success or failure criteria and otherwise keeps the right pods running.
func (c *Controller) syncJob(ctx context.Context, key string, job *batchv1.Job, mine []*corev1.Pod) error {
	orig := job.Status.DeepCopy()
	s := newJobSync(key, job, mine, c.now())
	if s.recordFinished() {
		got, err := c.updateStatus(ctx, job)
		if err != nil {
			return err
		}
		*job = *got
		if job.Status.UncountedTerminatedPods == nil {
			job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
		}
	}
	rmErr := c.countFinished(ctx, s)
	s.countActive()
	c.updateSuspension(s)
	if condition(job, batchv1.JobFailureTarget) == nil && condition(job, batchv1.JobSuccessCriteriaMet) == nil && !s.suspended {
		reason, msg, success := s.decide()
		switch {
		case reason != "" && success:
			setCondition(&job.Status, batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue, reason, msg, s.now)
		case reason != "":
			setCondition(&job.Status, batchv1.JobFailureTarget, corev1.ConditionTrue, reason, msg, s.now)
		}
	}
	created, deleted, manageErr := c.act(ctx, s, rmErr == nil)
	s.setActive(created, deleted)

	if d := job.Spec.ActiveDeadlineSeconds; d != nil && job.Status.StartTime != nil && !finished(job) {
		left := job.Status.StartTime.Add(time.Duration(*d) * time.Second).Sub(s.now)
		c.loop.AddAfter(key, max(left, 0)+10*time.Millisecond)
	}
	if !equalStatus(*orig, job.Status) {
		if _, err := c.updateStatus(ctx, job); err != nil {
			return errors.Join(rmErr, manageErr, err)
		}
	}
	return errors.Join(rmErr, manageErr)
}

func newJobSync(key string, job *batchv1.Job, mine []*corev1.Pod, now time.Time) *jobSync {
	if job.Status.UncountedTerminatedPods == nil {
		job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	s := &jobSync{key: key, job: job, mine: mine, now: now,
		completions: int(completionsOf(job)), isIndexed: indexed(job), suspended: ptr.Deref(job.Spec.Suspend, false)}
	s.completed = parseIndexes(job.Status.CompletedIndexes, s.completions)
	s.failedIdx = indexSet{}
	if job.Status.FailedIndexes != nil {
		s.failedIdx = parseIndexes(*job.Status.FailedIndexes, s.completions)
	}
	return s
}

// recordFinished records the finished pods still holding the finalizer as
// uncounted, before the finalizer goes, so none is lost or counted twice.
// It reports whether it recorded any.
func (s *jobSync) recordFinished() bool {
	job := s.job
	targeted := condition(job, batchv1.JobFailureTarget) != nil || condition(job, batchv1.JobSuccessCriteriaMet) != nil
	unc := job.Status.UncountedTerminatedPods
	counted := map[types.UID]bool{}
	for _, u := range append(slices.Clone(unc.Succeeded), unc.Failed...) {
		counted[u] = true
	}
	recorded := false
	for _, p := range s.mine {
		if !slices.Contains(p.Finalizers, TrackingFinalizer) || counted[p.UID] {
			continue
		}
		idx, hasIdx := podIndex(p)
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			if s.isIndexed && (!hasIdx || idx >= s.completions || s.completed[idx]) {
				s.release = append(s.release, p)
				continue
			}
			if s.isIndexed {
				s.completed[idx] = true
			}
			unc.Succeeded = append(unc.Succeeded, p.UID)
			recorded = true
		case p.Status.Phase == corev1.PodFailed || (p.DeletionTimestamp != nil && job.Spec.PodFailurePolicy == nil):
			if p.Status.Phase != corev1.PodFailed && (s.suspended || targeted) {
				// Pods we delete to suspend or finish the Job are not failures.
				s.release = append(s.release, p)
				continue
			}
			if !s.recordFailure(p, idx, hasIdx) {
				s.release = append(s.release, p)
				continue
			}
			unc.Failed = append(unc.Failed, p.UID)
			recorded = true
		}
	}
	return recorded
}

// recordFailure applies the pod failure policy and the per-index backoff
// limit to failed pod p (of index idx, if hasIdx); it reports false for a
// failure the policy ignores.
func (s *jobSync) recordFailure(p *corev1.Pod, idx int, hasIdx bool) bool {
	action, msg, matched := failurePolicyAction(s.job, p)
	if matched {
		switch action {
		case batchv1.PodFailurePolicyActionIgnore:
			return false
		case batchv1.PodFailurePolicyActionFailJob:
			if s.failMsg == "" {
				s.failReason, s.failMsg = ReasonPodFailurePolicy, msg
			}
		case batchv1.PodFailurePolicyActionFailIndex:
			if hasIdx {
				s.failedIdx[idx] = true
			}
		}
	}
	if limit := s.job.Spec.BackoffLimitPerIndex; limit != nil && hasIdx && action != batchv1.PodFailurePolicyActionFailIndex {
		if indexFailures(p)+1 > *limit {
			s.failedIdx[idx] = true
		}
	}
	return true
}

// countFinished removes the finalizer of the released and uncounted pods
// and, once that worked, moves the uncounted ones into the Job's counts.
// It returns the error of removing finalizers.
func (c *Controller) countFinished(ctx context.Context, s *jobSync) error {
	job := s.job
	byUID := map[types.UID]*corev1.Pod{}
	for _, p := range s.mine {
		byUID[p.UID] = p
	}
	unc := job.Status.UncountedTerminatedPods
	rm := slices.Clone(s.release)
	for _, u := range append(slices.Clone(unc.Succeeded), unc.Failed...) {
		if p, ok := byUID[u]; ok && slices.Contains(p.Finalizers, TrackingFinalizer) {
			rm = append(rm, p)
		}
	}
	rmErr := c.removeFinalizers(ctx, rm)
	if rmErr == nil {
		if s.isIndexed {
			job.Status.Succeeded = int32(len(s.completed))
			job.Status.CompletedIndexes = s.completed.String()
		} else {
			job.Status.Succeeded += int32(len(unc.Succeeded))
		}
		job.Status.Failed += int32(len(unc.Failed))
		job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	if job.Spec.BackoffLimitPerIndex != nil {
		job.Status.FailedIndexes = ptr.To(s.failedIdx.String())
	}
	s.succeeded = job.Status.Succeeded + int32(len(job.Status.UncountedTerminatedPods.Succeeded))
	s.failed = job.Status.Failed + int32(len(job.Status.UncountedTerminatedPods.Failed))
	if s.isIndexed {
		s.succeeded = int32(len(s.completed))
	}
	return rmErr
}

// countActive sorts the Job's pods into active and terminating.
func (s *jobSync) countActive() {
	for _, p := range s.mine {
		switch {
		case pods.Active(p):
			s.active = append(s.active, p)
		case !pods.Terminal(p) && p.DeletionTimestamp != nil:
			s.terminating++
		}
	}
}

// updateSuspension sets the Suspended condition and the start time:
// suspension stops the deadline clock, which restarts on resume.
func (c *Controller) updateSuspension(s *jobSync) {
	job := s.job
	switch {
	case s.suspended:
		if cond := condition(job, batchv1.JobSuspended); cond == nil {
			setCondition(&job.Status, batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended", s.now)
			job.Status.StartTime = nil
			c.recorder.Event(job, corev1.EventTypeNormal, "Suspended", "Job suspended")
		}
	case condition(job, batchv1.JobSuspended) != nil:
		setCondition(&job.Status, batchv1.JobSuspended, corev1.ConditionFalse, "JobResumed", "Job resumed", s.now)
		job.Status.StartTime = ptr.To(metav1.NewTime(s.now))
		c.recorder.Event(job, corev1.EventTypeNormal, "Resumed", "Job resumed")
	}
	if !s.suspended && job.Status.StartTime == nil {
		job.Status.StartTime = ptr.To(metav1.NewTime(s.now))
	}
}

// act deletes the active pods of a Job that met its criteria, and finishes
// it once none is left (and counted, which needs the finalizers removed);
// deletes the pods of a suspended Job; and otherwise keeps the right pods
// running. It returns how many pods it created and deleted.
func (c *Controller) act(ctx context.Context, s *jobSync, counted bool) (created, deleted int, err error) {
	job := s.job
	failTarget, successTarget := condition(job, batchv1.JobFailureTarget), condition(job, batchv1.JobSuccessCriteriaMet)
	switch {
	case failTarget != nil || successTarget != nil:
		deleted, err = c.deletePods(ctx, s.key, job, s.active)
		unc := job.Status.UncountedTerminatedPods
		pending := len(s.active) + s.terminating + len(unc.Succeeded) + len(unc.Failed)
		if pending != 0 || !counted || err != nil {
			return 0, deleted, err
		}
		if failTarget != nil {
			setCondition(&job.Status, batchv1.JobFailed, corev1.ConditionTrue, failTarget.Reason, failTarget.Message, s.now)
			c.recorder.Event(job, corev1.EventTypeWarning, failTarget.Reason, failTarget.Message)
		} else {
			setCondition(&job.Status, batchv1.JobComplete, corev1.ConditionTrue, successTarget.Reason, successTarget.Message, s.now)
			job.Status.CompletionTime = ptr.To(metav1.NewTime(s.now))
			c.recorder.Event(job, corev1.EventTypeNormal, "Completed", "Job completed")
		}
		return 0, deleted, nil
	case s.suspended:
		deleted, err = c.deletePods(ctx, s.key, job, s.active)
		return 0, deleted, err
	case c.exp.Satisfied(s.key):
		return c.manage(ctx, s)
	}
	return 0, 0, nil
}

// setActive sets the active, ready and terminating counts, after created
// pods were created and deleted deleted.
func (s *jobSync) setActive(created, deleted int) {
	st := &s.job.Status
	st.Active = int32(len(s.active) + created - deleted)
	ready := 0
	for _, p := range s.active {
		if pods.Ready(p) {
			ready++
		}
	}
	st.Ready = ptr.To(int32(max(ready-deleted, 0)))
	st.Terminating = ptr.To(int32(s.terminating + deleted))
}

// decide returns the condition reason and message the Job has earned, and
// whether it is success; an empty reason means it goes on.
func (s *jobSync) decide() (string, string, bool) {
	job := s.job
	switch {
	case s.failReason != "":
		return s.failReason, s.failMsg, false
	case job.Spec.BackoffLimitPerIndex == nil && s.failed > ptr.Deref(job.Spec.BackoffLimit, 6):
		return ReasonBackoffLimit, "Job has reached the specified backoff limit", false
	case job.Spec.MaxFailedIndexes != nil && int32(len(s.failedIdx)) > *job.Spec.MaxFailedIndexes:
		return ReasonMaxFailedIndexes, "Job has exceeded the specified maximal number of failed indexes", false
	case job.Spec.ActiveDeadlineSeconds != nil && job.Status.StartTime != nil &&
		!job.Status.StartTime.Add(time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second).After(s.now):
		return ReasonDeadline, "Job was active longer than specified deadline", false
	}
	if i := successPolicyMatched(job, s.completed); i >= 0 {
		return ReasonSuccessPolicy, fmt.Sprintf("Matched rules at index %d", i), true
	}
	if s.isIndexed {
		done := len(s.completed)
		for i := range s.failedIdx {
			if !s.completed[i] {
				done++
			}
		}
		if done < int(completionsOf(job)) {
			return "", "", false
		}
		if len(s.failedIdx) > 0 {
			return ReasonFailedIndexes, "Job has failed indexes", false
		}
		return ReasonCompletionsReached, "Reached expected number of succeeded pods", true
	}
	if job.Spec.Completions != nil {
		if s.succeeded >= *job.Spec.Completions {
			return ReasonCompletionsReached, "Reached expected number of succeeded pods", true
		}
		return "", "", false
	}
	if s.succeeded > 0 && len(s.active) == 0 {
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
func (c *Controller) manage(ctx context.Context, s *jobSync) (int, int, error) {
	job := s.job
	parallelism := int(ptr.Deref(job.Spec.Parallelism, 1))
	if s.isIndexed {
		return c.manageIndexed(ctx, s, parallelism)
	}
	want := parallelism
	if job.Spec.Completions != nil {
		want = min(want, int(*job.Spec.Completions-s.succeeded))
	} else if s.succeeded > 0 {
		want = 0
	}
	want = max(want, 0)
	if diff := len(s.active) - want; diff > 0 {
		victims := append([]*corev1.Pod(nil), s.active...)
		pods.RankForDeletion(victims, s.active, s.now)
		n, err := c.deletePods(ctx, s.key, job, victims[:diff])
		return 0, n, err
	}
	n := want - len(s.active)
	if n == 0 {
		return 0, 0, nil
	}
	if wait := c.jobBackoff(s); wait > 0 {
		c.loop.AddAfter(s.key, wait)
		return 0, 0, nil
	}
	created, err := c.createPods(ctx, s.key, job, make([]int, n), false)
	return created, 0, err
}

// jobBackoff is how long the Job's back-off still holds new pods after its
// last failed one: DefaultBackoff doubled per failure. It holds every
// pod of the Job, of an Indexed Job too unless backoffLimitPerIndex
// gives each index its own.
func (c *Controller) jobBackoff(s *jobSync) time.Duration {
	if s.failed == 0 {
		return 0
	}
	var lastFail time.Time
	for _, p := range s.mine {
		if p.Status.Phase == corev1.PodFailed {
			lastFail = maxTime(lastFail, finishTime(p))
		}
	}
	return max(lastFail.Add(c.backoffDelay(s.failed)).Sub(s.now), 0)
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// manageIndexed keeps one pod running per index that is neither completed
// nor failed, at most parallelism of them, lowest first, retrying a failed
// index after the back-off (its own with backoffLimitPerIndex, else the
// Job's); it returns how many pods it created and deleted.
func (c *Controller) manageIndexed(ctx context.Context, s *jobSync, parallelism int) (int, int, error) {
	key, job, mine, active, now := s.key, s.job, s.mine, s.active, s.now
	completions, completed, failedIdx := int(completionsOf(job)), s.completed, s.failedIdx
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
	perIndex := job.Spec.BackoffLimitPerIndex != nil
	if wait := c.jobBackoff(s); !perIndex && wait > 0 && len(keep) < parallelism {
		// The lowest pending index, the one that failed too, is created
		// once the Job's back-off is over; another index does not jump
		// the queue meanwhile.
		c.loop.AddAfter(key, wait)
		return 0, deleted, nil
	}
	var todo []int
	var retry time.Duration
	for i := 0; i < completions && len(todo) < parallelism-len(keep); i++ {
		if completed[i] || failedIdx[i] || running[i] {
			continue
		}
		if wait := lastFail[i].Add(c.backoffDelay(failures[i])).Sub(now); perIndex && failures[i] > 0 && wait > 0 {
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
