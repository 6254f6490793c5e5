package defaults

import (
	"maps"
	"math"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// Job defaults a Job: a single, non-indexed, unsuspended run with six
// retries (unlimited at job level when retries are counted per index),
// labels copied from the template, pods replaced once they are failed (or
// terminating, without a pod failure policy), an automatic selector, and
// the template's pod spec defaults. The template's restartPolicy is left
// empty: a Job requires the user to choose it.
func Job(j *batchv1.Job) {
	spec := &j.Spec
	// Both unset means one pod to run once; only completions set means a
	// parallelism of one.
	if spec.Completions == nil && spec.Parallelism == nil {
		spec.Completions = new(int32(1))
	}
	if spec.Parallelism == nil {
		spec.Parallelism = new(int32(1))
	}
	if spec.BackoffLimit == nil {
		if spec.BackoffLimitPerIndex != nil {
			spec.BackoffLimit = new(int32(math.MaxInt32))
		} else {
			spec.BackoffLimit = new(int32(6))
		}
	}
	if spec.Template.Labels != nil && len(j.Labels) == 0 {
		j.Labels = maps.Clone(spec.Template.Labels)
	}
	if spec.CompletionMode == nil {
		spec.CompletionMode = new(batchv1.NonIndexedCompletion)
	}
	if spec.Suspend == nil {
		spec.Suspend = new(false)
	}
	// JobPodReplacementPolicy is GA since 1.34.
	if spec.PodReplacementPolicy == nil {
		if spec.PodFailurePolicy != nil {
			spec.PodReplacementPolicy = new(batchv1.Failed)
		} else {
			spec.PodReplacementPolicy = new(batchv1.TerminatingOrFailed)
		}
	}
	if spec.ManualSelector == nil {
		spec.ManualSelector = new(false)
	}
	jobSpec(spec)
}

// jobSpec sets the defaults every JobSpec gets, including a CronJob's job
// template, which upstream does not give the Job-level defaults above.
func jobSpec(spec *batchv1.JobSpec) {
	if spec.PodFailurePolicy != nil {
		for i := range spec.PodFailurePolicy.Rules {
			patterns := spec.PodFailurePolicy.Rules[i].OnPodConditions
			for k := range patterns {
				if patterns[k].Status == "" {
					patterns[k].Status = corev1.ConditionTrue
				}
			}
		}
	}
	podTemplateSpec(&spec.Template)
}

// CronJob allows concurrent runs, starts unsuspended, keeps three successful
// and one failed job, and defaults the pod template of its job template.
func CronJob(cj *batchv1.CronJob) {
	spec := &cj.Spec
	if spec.ConcurrencyPolicy == "" {
		spec.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if spec.Suspend == nil {
		spec.Suspend = new(false)
	}
	if spec.SuccessfulJobsHistoryLimit == nil {
		spec.SuccessfulJobsHistoryLimit = new(int32(3))
	}
	if spec.FailedJobsHistoryLimit == nil {
		spec.FailedJobsHistoryLimit = new(int32(1))
	}
	jobSpec(&spec.JobTemplate.Spec)
}
