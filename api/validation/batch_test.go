package validation

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var jobLabels = map[string]string{"batch.kubernetes.io/controller-uid": "1234"}

func validJob() *batchv1.Job {
	tpl := validTemplate(jobLabels)
	tpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	return &batchv1.Job{ObjectMeta: meta("pi"), Spec: batchv1.JobSpec{
		Parallelism:    ptr[int32](1),
		Completions:    ptr[int32](1),
		BackoffLimit:   ptr[int32](6),
		CompletionMode: ptr(batchv1.NonIndexedCompletion),
		Suspend:        ptr(false),
		Selector:       &metav1.LabelSelector{MatchLabels: jobLabels},
		Template:       tpl,
	}}
}

func TestJob(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(j *batchv1.Job)
		want   []want
	}{
		{"valid", func(j *batchv1.Job) {}, nil},
		{"negative counts", func(j *batchv1.Job) {
			j.Spec.Parallelism, j.Spec.Completions, j.Spec.BackoffLimit = ptr[int32](-1), ptr[int32](-1), ptr[int32](-1)
		}, []want{invalid("spec.parallelism"), invalid("spec.completions"), invalid("spec.backoffLimit")}},
		{"restartPolicy Always rejected", func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways }, []want{notSup("spec.template.spec.restartPolicy")}},
		{"selector required", func(j *batchv1.Job) { j.Spec.Selector = nil }, []want{required("spec.selector")}},
		{"selector must match", func(j *batchv1.Job) { j.Spec.Template.Labels = nil }, []want{invalid("spec.template.metadata.labels")}},
		{"indexed needs completions", func(j *batchv1.Job) {
			j.Spec.CompletionMode = ptr(batchv1.IndexedCompletion)
			j.Spec.Completions = nil
		}, []want{required("spec.completions")}},
		{"backoffLimitPerIndex needs indexed", func(j *batchv1.Job) { j.Spec.BackoffLimitPerIndex = ptr[int32](1) }, []want{invalid("spec.backoffLimitPerIndex")}},
		{"maxFailedIndexes needs backoffLimitPerIndex", func(j *batchv1.Job) {
			j.Spec.CompletionMode = ptr(batchv1.IndexedCompletion)
			j.Spec.MaxFailedIndexes = ptr[int32](1)
		}, []want{required("spec.backoffLimitPerIndex")}},
		{"pod failure policy rules", func(j *batchv1.Job) {
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
					Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{0, 2, 1}}},
				{Action: "Retry"},
				{Action: batchv1.PodFailurePolicyActionIgnore, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: "Maybe"}}},
			}}
		}, []want{
			invalid("spec.podFailurePolicy.rules[0].onExitCodes.values[0]"), invalid("spec.podFailurePolicy.rules[0].onExitCodes.values[2]"),
			notSup("spec.podFailurePolicy.rules[1].action"), invalid("spec.podFailurePolicy.rules[1]"),
			notSup("spec.podFailurePolicy.rules[2].onPodConditions[0].status"),
		}},
		{"pod failure policy needs Never", func(j *batchv1.Job) {
			j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{}
		}, []want{notSup("spec.template.spec.restartPolicy")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			tc.mutate(j)
			expectErrs(t, ValidateCreate(j), tc.want...)
		})
	}
	updates := []struct {
		name   string
		mutate func(j, old *batchv1.Job)
		want   []want
	}{
		{"parallelism may change", func(j, old *batchv1.Job) { j.Spec.Parallelism = ptr[int32](4) }, nil},
		{"completions immutable", func(j, old *batchv1.Job) { j.Spec.Completions = ptr[int32](4) }, []want{invalid("spec.completions")}},
		{"template immutable", func(j, old *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Image = "other" }, []want{invalid("spec.template")}},
		{"suspended job may change placement", func(j, old *batchv1.Job) {
			old.Spec.Suspend, j.Spec.Suspend = ptr(true), ptr(true)
			j.Spec.Template.Spec.NodeSelector = map[string]string{"pool": "gpu"}
		}, nil},
		{"completion mode immutable", func(j, old *batchv1.Job) {
			j.Spec.CompletionMode = ptr(batchv1.IndexedCompletion)
		}, []want{invalid("spec.completionMode")}},
	}
	for _, tc := range updates {
		t.Run("update "+tc.name, func(t *testing.T) {
			old := validJob()
			stored(&old.ObjectMeta)
			j := old.DeepCopy()
			tc.mutate(j, old)
			expectErrs(t, ValidateUpdate(j, old), tc.want...)
		})
	}
}

func validCronJob() *batchv1.CronJob {
	tpl := validTemplate(nil)
	tpl.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
	return &batchv1.CronJob{ObjectMeta: meta("nightly"), Spec: batchv1.CronJobSpec{
		Schedule:                   "0 3 * * *",
		ConcurrencyPolicy:          batchv1.AllowConcurrent,
		SuccessfulJobsHistoryLimit: ptr[int32](3),
		FailedJobsHistoryLimit:     ptr[int32](1),
		Suspend:                    ptr(false),
		JobTemplate:                batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: tpl, BackoffLimit: ptr[int32](6)}},
	}}
}

func TestCronJob(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(c *batchv1.CronJob)
		want   []want
	}{
		{"valid", func(c *batchv1.CronJob) {}, nil},
		{"descriptor", func(c *batchv1.CronJob) { c.Spec.Schedule = "@hourly" }, nil},
		{"every", func(c *batchv1.CronJob) { c.Spec.Schedule = "@every 1h30m" }, nil},
		{"names and steps", func(c *batchv1.CronJob) { c.Spec.Schedule = "*/15 9-17 * JAN-jun mon-fri" }, nil},
		{"schedule required", func(c *batchv1.CronJob) { c.Spec.Schedule = "" }, []want{required("spec.schedule")}},
		{"bad schedule", func(c *batchv1.CronJob) { c.Spec.Schedule = "61 * * * *" }, []want{invalid("spec.schedule")}},
		{"too few fields", func(c *batchv1.CronJob) { c.Spec.Schedule = "* * *" }, []want{invalid("spec.schedule")}},
		{"TZ in schedule", func(c *batchv1.CronJob) { c.Spec.Schedule = "TZ=UTC 0 3 * * *" }, []want{invalid("spec.schedule")}},
		{"time zone valid", func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr("Europe/Paris") }, nil},
		{"time zone unknown", func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr("Mars/Olympus") }, []want{invalid("spec.timeZone")}},
		{"time zone Local", func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr("Local") }, []want{invalid("spec.timeZone")}},
		{"concurrency enum", func(c *batchv1.CronJob) { c.Spec.ConcurrencyPolicy = "Sometimes" }, []want{notSup("spec.concurrencyPolicy")}},
		{"name too long", func(c *batchv1.CronJob) { c.Name = strings.Repeat("a", 53) }, []want{invalid("metadata.name")}},
		{"job template restart policy", func(c *batchv1.CronJob) {
			c.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		}, []want{notSup("spec.jobTemplate.spec.template.spec.restartPolicy")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validCronJob()
			tc.mutate(c)
			expectErrs(t, ValidateCreate(c), tc.want...)
		})
	}
	t.Run("existing TZ schedule tolerated on update", func(t *testing.T) {
		old := validCronJob()
		old.Spec.Schedule = "TZ=UTC 0 3 * * *"
		stored(&old.ObjectMeta)
		c := old.DeepCopy()
		c.Spec.Schedule = "TZ=UTC 0 4 * * *"
		expectErrs(t, ValidateUpdate(c, old))
	})
}

func TestCronParser(t *testing.T) {
	valid := []string{"* * * * *", "0 0 1 1 0", "5,10,15 */2 1-31/3 * SUN", "? ? ? ? ?", "@yearly", "@midnight", "CRON_TZ=UTC 0 0 * * *", "0 0 * * 6"}
	for _, s := range valid {
		t.Run("valid "+s, func(t *testing.T) {
			if err := parseCronSchedule(s); err != nil {
				t.Errorf("parseCronSchedule(%q): %v", s, err)
			}
		})
	}
	invalid := []string{"", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *", "* * * * 7", "5-1 * * * *", "*/0 * * * *", "1-2-3 * * * *", "a * * * *", "@often", "@every soon", "TZ=Nowhere/City * * * * *"}
	for _, s := range invalid {
		t.Run("invalid "+s, func(t *testing.T) {
			if err := parseCronSchedule(s); err == nil {
				t.Errorf("parseCronSchedule(%q) accepted", s)
			}
		})
	}
}
