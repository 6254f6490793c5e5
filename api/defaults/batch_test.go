package defaults

import (
	"math"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Expected values: upstream pkg/apis/batch/v1/defaults.go SetDefaults_Job,
// SetDefaults_CronJob and SetDefaults_PodFailurePolicyOnPodConditionsPattern;
// JobPodReplacementPolicy is GA since 1.34, so its default always applies.

// jobTemplate is a Job pod template; restartPolicy is the user's to choose
// and is only defaulted as any pod spec is (to Always, which validation
// then rejects for Jobs, exactly as upstream).
func jobTemplate() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"job": "x"}},
		Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever},
	}
}

func defaultedJobTemplate() corev1.PodTemplateSpec {
	t := jobTemplate()
	t.Spec = defaultedSpec(corev1.PodSpec{})
	t.Spec.RestartPolicy = corev1.RestartPolicyNever
	return t
}

func TestJob(t *testing.T) {
	runDefaulting(t, Job, []defaultingCase[batchv1.Job]{
		{
			name: "single run job",
			in:   &batchv1.Job{Spec: batchv1.JobSpec{Template: jobTemplate()}},
			want: &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"job": "x"}}, // labels from template
				Spec: batchv1.JobSpec{
					Parallelism:          new(int32(1)),
					Completions:          new(int32(1)),
					BackoffLimit:         new(int32(6)),
					CompletionMode:       new(batchv1.NonIndexedCompletion),
					Suspend:              new(false),
					PodReplacementPolicy: new(batchv1.TerminatingOrFailed),
					ManualSelector:       new(false),
					Template:             defaultedJobTemplate(),
				},
			},
		},
		{
			name: "completions only keeps completions and sets parallelism 1",
			in:   &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"own": "y"}}, Spec: batchv1.JobSpec{Completions: new(int32(5)), Template: jobTemplate()}},
			want: &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"own": "y"}},
				Spec: batchv1.JobSpec{
					Parallelism:          new(int32(1)),
					Completions:          new(int32(5)),
					BackoffLimit:         new(int32(6)),
					CompletionMode:       new(batchv1.NonIndexedCompletion),
					Suspend:              new(false),
					PodReplacementPolicy: new(batchv1.TerminatingOrFailed),
					ManualSelector:       new(false),
					Template:             defaultedJobTemplate(),
				},
			},
		},
		{
			name: "parallelism only leaves completions unset",
			in:   &batchv1.Job{Spec: batchv1.JobSpec{Parallelism: new(int32(3))}},
			want: &batchv1.Job{Spec: batchv1.JobSpec{
				Parallelism:          new(int32(3)),
				BackoffLimit:         new(int32(6)),
				CompletionMode:       new(batchv1.NonIndexedCompletion),
				Suspend:              new(false),
				PodReplacementPolicy: new(batchv1.TerminatingOrFailed),
				ManualSelector:       new(false),
				Template:             corev1.PodTemplateSpec{Spec: defaultedSpec(corev1.PodSpec{})},
			}},
		},
		{
			name: "per-index backoff and pod failure policy",
			in: &batchv1.Job{Spec: batchv1.JobSpec{
				CompletionMode:       new(batchv1.IndexedCompletion),
				Completions:          new(int32(2)),
				BackoffLimitPerIndex: new(int32(1)),
				PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
					Action:          batchv1.PodFailurePolicyActionIgnore,
					OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget}},
				}}},
			}},
			want: &batchv1.Job{Spec: batchv1.JobSpec{
				Parallelism:          new(int32(1)),
				Completions:          new(int32(2)),
				BackoffLimitPerIndex: new(int32(1)),
				BackoffLimit:         new(int32(math.MaxInt32)), // with backoffLimitPerIndex
				CompletionMode:       new(batchv1.IndexedCompletion),
				Suspend:              new(false),
				PodReplacementPolicy: new(batchv1.Failed), // with a pod failure policy
				ManualSelector:       new(false),
				PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
					Action:          batchv1.PodFailurePolicyActionIgnore,
					OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue}},
				}}},
				Template: corev1.PodTemplateSpec{Spec: defaultedSpec(corev1.PodSpec{})},
			}},
		},
	})
}

func TestCronJob(t *testing.T) {
	runDefaulting(t, CronJob, []defaultingCase[batchv1.CronJob]{
		{
			// The job template gets pod spec defaults but not the Job-level
			// ones (parallelism, backoffLimit, ...): SetDefaults_Job takes a Job.
			name: "schedule only",
			in: &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *", JobTemplate: batchv1.JobTemplateSpec{
				Spec: batchv1.JobSpec{Template: jobTemplate()},
			}}},
			want: &batchv1.CronJob{Spec: batchv1.CronJobSpec{
				Schedule:                   "*/5 * * * *",
				ConcurrencyPolicy:          batchv1.AllowConcurrent,
				Suspend:                    new(false),
				SuccessfulJobsHistoryLimit: new(int32(3)),
				FailedJobsHistoryLimit:     new(int32(1)),
				JobTemplate:                batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: defaultedJobTemplate()}},
			}},
		},
	})
}
