// Package cronjob is the controller that starts a CronJob's Jobs on its
// schedule (standard cron syntax, in spec.timeZone or the controller's
// local time), honouring concurrencyPolicy, startingDeadlineSeconds,
// suspend and the successful/failed history limits. A schedule or time
// zone that does not parse gets a Warning Event and is skipped.
package cronjob

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	batchinformers "k8s.io/client-go/informers/batch/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/tools/reference"
	"k8s.io/utils/ptr"

	"trireme.dev/controller-manager/internal/ownership"
	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "cronjob"

// Kind is the CronJob kind.
var Kind = batchv1.SchemeGroupVersion.WithKind("CronJob")

// ScheduledTimestampAnnotation records on each Job the time it was
// scheduled for, in the CronJob's time zone.
const ScheduledTimestampAnnotation = batchv1.CronJobScheduledTimestampAnnotation

// maxMissed is how many missed start times are counted before the
// controller gives up counting and warns, as upstream.
const maxMissed = 100

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client creates and deletes Jobs and writes CronJob status.
	Client kubernetes.Interface
	// CronJobs and Jobs are the shared informers; New registers its
	// handlers on both.
	CronJobs batchinformers.CronJobInformer
	Jobs     batchinformers.JobInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Controller is the cronjob controller.
type Controller struct {
	client   kubernetes.Interface
	recorder record.EventRecorder
	cronJobs batchlisters.CronJobLister
	jobs     batchlisters.JobLister
	loop     *worker.Loop
	synced   []cache.InformerSynced
	now      func() time.Time
}

// New returns the controller.
func New(o Options) (*Controller, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Controller{
		client: o.Client, recorder: o.Recorder,
		cronJobs: o.CronJobs.Lister(), jobs: o.Jobs.Lister(),
		synced: []cache.InformerSynced{o.CronJobs.Informer().HasSynced, o.Jobs.Informer().HasSynced},
		now:    o.Now,
	}
	c.loop = worker.New(Name, c.sync)
	if _, err := o.CronJobs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch cronjobs: %w", err)
	}
	jobChanged := func(obj any) {
		j, ok := worker.ObjectAs[*batchv1.Job](obj)
		if !ok {
			return
		}
		if ref := metav1.GetControllerOf(j); ref != nil && ref.Kind == Kind.Kind {
			c.loop.Add(j.Namespace + "/" + ref.Name)
		}
	}
	if _, err := o.Jobs.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    jobChanged,
		UpdateFunc: func(_, obj any) { jobChanged(obj) },
		DeleteFunc: jobChanged,
	}); err != nil {
		return nil, fmt.Errorf("watch jobs: %w", err)
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	cached, err := c.cronJobs.CronJobs(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("get cronjob %s: %w", key, err)
	}
	cj := cached.DeepCopy()
	all, err := c.jobs.Jobs(namespace).List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list jobs: %w", err)
	}
	var mine []*batchv1.Job
	for _, j := range all {
		if metav1.IsControlledBy(j, cj) {
			mine = append(mine, j)
		}
	}
	orig := cj.Status.DeepCopy()
	next, syncErr := c.syncCronJob(ctx, cj, mine)
	if !apiequality.Semantic.DeepEqual(*orig, cj.Status) {
		if _, err := c.client.BatchV1().CronJobs(namespace).UpdateStatus(ctx, cj, metav1.UpdateOptions{}); err != nil {
			return errors.Join(syncErr, fmt.Errorf("update status of cronjob %s: %w", key, err))
		}
	}
	if err := c.cleanup(ctx, cj, mine); err != nil {
		syncErr = errors.Join(syncErr, err)
	}
	if next != nil {
		// A little past the minute, so the clock has surely reached it.
		c.loop.AddAfter(key, next.Sub(c.now())+100*time.Millisecond)
	}
	return syncErr
}

func finishedJob(j *batchv1.Job) (batchv1.JobConditionType, bool) {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.Type, true
		}
	}
	return "", false
}

// Schedule parses cj's schedule in its time zone.
func Schedule(cj *batchv1.CronJob) (cron.Schedule, *time.Location, error) {
	loc := time.Local
	if tz := cj.Spec.TimeZone; tz != nil {
		l, err := time.LoadLocation(*tz)
		if err != nil {
			return nil, nil, fmt.Errorf("unknown time zone %q: %w", *tz, err)
		}
		loc = l
	}
	spec := cj.Spec.Schedule
	if strings.Contains(spec, "TZ=") {
		return nil, nil, fmt.Errorf("CRON_TZ or TZ used in schedule %q is not officially supported, see spec.timeZone", spec)
	}
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("unparseable schedule %q: %w", spec, err)
	}
	return sched, loc, nil
}

// syncCronJob updates cj's status from its Jobs and starts the Job due now;
// it returns when to look again.
func (c *Controller) syncCronJob(ctx context.Context, cj *batchv1.CronJob, mine []*batchv1.Job) (*time.Time, error) {
	c.trackActive(ctx, cj, mine)
	if cj.DeletionTimestamp != nil {
		return nil, nil
	}
	sched, loc, err := Schedule(cj)
	if err != nil {
		reason := "UnparseableSchedule"
		if cj.Spec.TimeZone != nil && strings.Contains(err.Error(), "time zone") {
			reason = "UnknownTimeZone"
		}
		c.recorder.Eventf(cj, corev1.EventTypeWarning, reason, "%v", err)
		return nil, nil
	}
	if ptr.Deref(cj.Spec.Suspend, false) {
		return nil, nil
	}
	now := c.now().In(loc)
	scheduled, next, missed := mostRecent(cj, sched, now)
	if missed > maxMissed {
		c.recorder.Eventf(cj, corev1.EventTypeWarning, "TooManyMissedTimes",
			"too many missed start times: %d. Set or decrease .spec.startingDeadlineSeconds or check clock skew", missed)
	}
	if scheduled == nil {
		return &next, nil
	}
	if d := cj.Spec.StartingDeadlineSeconds; d != nil && scheduled.Add(time.Duration(*d)*time.Second).Before(now) {
		c.recorder.Eventf(cj, corev1.EventTypeWarning, "MissSchedule", "Missed scheduled time to start a job: %s", scheduled.UTC().Format(time.RFC1123Z))
		return &next, nil
	}
	jobName := fmt.Sprintf("%s-%d", cj.Name, scheduled.Unix()/60)
	for _, j := range mine {
		if j.Name == jobName {
			return &next, nil
		}
	}
	if cj.Status.LastScheduleTime != nil && !cj.Status.LastScheduleTime.Time.Before(*scheduled) {
		return &next, nil
	}
	if err := c.startJob(ctx, cj, jobName, *scheduled); err != nil {
		return nil, err
	}
	return &next, nil
}

// trackActive brings status.active up to date: active Jobs that finished
// or vanished leave it (a finished one may set lastSuccessfulTime), and
// running Jobs we own but lost track of join it.
func (c *Controller) trackActive(ctx context.Context, cj *batchv1.CronJob, mine []*batchv1.Job) {
	byUID := map[types.UID]*batchv1.Job{}
	for _, j := range mine {
		byUID[j.UID] = j
	}
	var active []corev1.ObjectReference
	for _, ref := range cj.Status.Active {
		j, ok := byUID[ref.UID]
		if !ok {
			if _, err := c.client.BatchV1().Jobs(cj.Namespace).Get(ctx, ref.Name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				c.recorder.Eventf(cj, corev1.EventTypeNormal, "MissingJob", "Active job went missing: %v", ref.Name)
				continue
			}
			active = append(active, ref)
			continue
		}
		if typ, done := finishedJob(j); done {
			c.recorder.Eventf(cj, corev1.EventTypeNormal, "SawCompletedJob", "Saw completed job: %s, condition: %v", j.Name, typ)
			if typ == batchv1.JobComplete && j.Status.CompletionTime != nil &&
				(cj.Status.LastSuccessfulTime == nil || cj.Status.LastSuccessfulTime.Before(j.Status.CompletionTime)) {
				cj.Status.LastSuccessfulTime = j.Status.CompletionTime
			}
			continue
		}
		active = append(active, ref)
	}
	for _, j := range mine {
		if _, done := finishedJob(j); done || slices.ContainsFunc(active, func(r corev1.ObjectReference) bool { return r.UID == j.UID }) {
			continue
		}
		if ref, err := reference.GetReference(scheme.Scheme, j); err == nil {
			active = append(active, *ref)
		}
	}
	if len(active) == 0 {
		active = nil
	}
	cj.Status.Active = active
}

// startJob starts the Job of the time scheduled, as the concurrency policy
// allows: Forbid skips it while one runs, Replace deletes the running ones
// first.
func (c *Controller) startJob(ctx context.Context, cj *batchv1.CronJob, jobName string, scheduled time.Time) error {
	switch cj.Spec.ConcurrencyPolicy {
	case batchv1.ForbidConcurrent:
		if len(cj.Status.Active) > 0 {
			c.recorder.Eventf(cj, corev1.EventTypeNormal, "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid")
			return nil
		}
	case batchv1.ReplaceConcurrent:
		for _, ref := range cj.Status.Active {
			err := c.client.BatchV1().Jobs(cj.Namespace).Delete(ctx, ref.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
			if err != nil && !apierrors.IsNotFound(err) {
				c.recorder.Eventf(cj, corev1.EventTypeWarning, "FailedDelete", "Deleted job: %v", err)
				return fmt.Errorf("replace job %s: %w", ref.Name, err)
			}
			c.recorder.Eventf(cj, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted job %v", ref.Name)
		}
		cj.Status.Active = nil
	}
	job := newJob(cj, jobName, scheduled)
	created, err := c.client.BatchV1().Jobs(cj.Namespace).Create(ctx, job, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		return nil
	case err != nil:
		c.recorder.Eventf(cj, corev1.EventTypeWarning, "FailedCreate", "Error creating job: %v", err)
		return fmt.Errorf("create job %s: %w", jobName, err)
	}
	c.recorder.Eventf(cj, corev1.EventTypeNormal, "SuccessfulCreate", "Created job %v", created.Name)
	if ref, err := reference.GetReference(scheme.Scheme, created); err == nil {
		cj.Status.Active = append(cj.Status.Active, *ref)
	}
	cj.Status.LastScheduleTime = ptr.To(metav1.NewTime(scheduled))
	return nil
}

// mostRecent returns the latest start time due by now that has not been
// started, the next start time after now and how many were missed.
func mostRecent(cj *batchv1.CronJob, sched cron.Schedule, now time.Time) (*time.Time, time.Time, int) {
	earliest := cj.CreationTimestamp.Time
	if cj.Status.LastScheduleTime != nil {
		earliest = cj.Status.LastScheduleTime.Time
	}
	if d := cj.Spec.StartingDeadlineSeconds; d != nil {
		if s := now.Add(-time.Duration(*d) * time.Second); s.After(earliest) {
			earliest = s
		}
	}
	earliest = earliest.In(now.Location())
	var last *time.Time
	missed := 0
	t := sched.Next(earliest)
	for !t.After(now) {
		missed++
		tt := t
		last = &tt
		if missed > maxMissed+1 {
			// Skip ahead instead of walking every minute of a long outage.
			t = sched.Next(now.Add(-time.Minute))
			for !t.After(now) {
				tt := t
				last = &tt
				t = sched.Next(t)
			}
			break
		}
		t = sched.Next(t)
	}
	return last, t, missed
}

func newJob(cj *batchv1.CronJob, name string, scheduled time.Time) *batchv1.Job {
	t := cj.Spec.JobTemplate
	annotations := maps.Clone(t.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[ScheduledTimestampAnnotation] = scheduled.Format(time.RFC3339)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       cj.Namespace,
			Labels:          maps.Clone(t.Labels),
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{ownership.Ref(cj, Kind)},
		},
		Spec: *t.Spec.DeepCopy(),
	}
}

// cleanup deletes the oldest finished Jobs beyond the history limits.
func (c *Controller) cleanup(ctx context.Context, cj *batchv1.CronJob, mine []*batchv1.Job) error {
	var ok, bad []*batchv1.Job
	for _, j := range mine {
		switch typ, done := finishedJob(j); {
		case !done:
		case typ == batchv1.JobComplete:
			ok = append(ok, j)
		default:
			bad = append(bad, j)
		}
	}
	var errs []error
	for _, g := range []struct {
		jobs  []*batchv1.Job
		limit int32
	}{{ok, ptr.Deref(cj.Spec.SuccessfulJobsHistoryLimit, 3)}, {bad, ptr.Deref(cj.Spec.FailedJobsHistoryLimit, 1)}} {
		excess := len(g.jobs) - int(g.limit)
		if excess <= 0 {
			continue
		}
		slices.SortFunc(g.jobs, func(a, b *batchv1.Job) int {
			return startTime(a).Compare(startTime(b))
		})
		for _, j := range g.jobs[:excess] {
			err := c.client.BatchV1().Jobs(j.Namespace).Delete(ctx, j.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
			if err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete old job %s: %w", j.Name, err))
				continue
			}
			c.recorder.Eventf(cj, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted job %v", j.Name)
		}
	}
	return errors.Join(errs...)
}

func startTime(j *batchv1.Job) time.Time {
	if j.Status.StartTime != nil {
		return j.Status.StartTime.Time
	}
	return j.CreationTimestamp.Time
}
