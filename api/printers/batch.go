package printers

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	batchv1beta1 "k8s.io/api/batch/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

var jobColumns = columns(
	nameCol(),
	col("Status", typeString, "Status of the job."),
	col("Completions", typeString, batchv1.JobStatus{}.SwaggerDoc()["succeeded"]),
	col("Duration", typeString, "Time required to complete the job."),
	ageCol(),
	wide("Containers", typeString, containersDoc),
	wide("Images", typeString, imagesDoc),
	wide("Selector", typeString, batchv1.JobSpec{}.SwaggerDoc()["selector"]),
)

func jobCells(job *batchv1.Job, now time.Time) []any {
	var completions string
	switch {
	case job.Spec.Completions != nil:
		completions = fmt.Sprintf("%d/%d", job.Status.Succeeded, *job.Spec.Completions)
	case deref(job.Spec.Parallelism) > 1:
		completions = fmt.Sprintf("%d/1 of %d", job.Status.Succeeded, *job.Spec.Parallelism)
	default:
		completions = fmt.Sprintf("%d/1", job.Status.Succeeded)
	}
	var took string
	switch {
	case job.Status.StartTime == nil:
	case job.Status.CompletionTime == nil:
		took = duration.HumanDuration(now.Sub(job.Status.StartTime.Time))
	default:
		took = duration.HumanDuration(job.Status.CompletionTime.Sub(job.Status.StartTime.Time))
	}
	names, images := containerCells(job.Spec.Template.Spec.Containers)
	return []any{job.Name, jobStatus(job), completions, took, age(job, now), names, images, metav1.FormatLabelSelector(job.Spec.Selector)}
}

// jobStatus picks the first of the job's states that holds, terminal
// conditions before deletion before the interim ones.
func jobStatus(job *batchv1.Job) string {
	is := func(t batchv1.JobConditionType) bool {
		for _, c := range job.Status.Conditions {
			if c.Type == t {
				return c.Status == corev1.ConditionTrue
			}
		}
		return false
	}
	switch {
	case is(batchv1.JobComplete):
		return "Complete"
	case is(batchv1.JobFailed):
		return "Failed"
	case job.DeletionTimestamp != nil:
		return "Terminating"
	case is(batchv1.JobSuspended):
		return "Suspended"
	case is(batchv1.JobFailureTarget):
		return "FailureTarget"
	case is(batchv1.JobSuccessCriteriaMet):
		return "SuccessCriteriaMet"
	}
	return "Running"
}

var cronJobColumns = columns(
	nameCol(),
	col("Schedule", typeString, batchv1beta1.CronJobSpec{}.SwaggerDoc()["schedule"]),
	col("Timezone", typeString, batchv1beta1.CronJobSpec{}.SwaggerDoc()["timeZone"]),
	col("Suspend", typeBoolean, batchv1beta1.CronJobSpec{}.SwaggerDoc()["suspend"]),
	col("Active", typeInteger, batchv1beta1.CronJobStatus{}.SwaggerDoc()["active"]),
	col("Last Schedule", typeString, batchv1beta1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"]),
	ageCol(),
	wide("Containers", typeString, containersDoc),
	wide("Images", typeString, imagesDoc),
	wide("Selector", typeString, batchv1.JobSpec{}.SwaggerDoc()["selector"]),
)

func cronJobCells(cj *batchv1.CronJob, now time.Time) []any {
	last := none
	if cj.Status.LastScheduleTime != nil {
		last = since(*cj.Status.LastScheduleTime, now)
	}
	job := cj.Spec.JobTemplate.Spec
	names, images := containerCells(job.Template.Spec.Containers)
	return []any{cj.Name, cj.Spec.Schedule, stringOr(cj.Spec.TimeZone, none), boolPtr(cj.Spec.Suspend), int64(len(cj.Status.Active)),
		last, age(cj, now), names, images, metav1.FormatLabelSelector(job.Selector)}
}
