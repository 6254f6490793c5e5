package apis

import (
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// generateJobSelector gives a Job without a manual selector the selector and
// template labels upstream generates from its UID, so its pods are never
// claimed by another Job.
func generateJobSelector(job *batchv1.Job) {
	if job.Spec.ManualSelector != nil && *job.Spec.ManualSelector {
		return
	}
	uid := string(job.UID)
	labels := map[string]string{
		batchv1.ControllerUidLabel: uid,
		batchv1.JobNameLabel:       job.Name,
		// The legacy keys are still set upstream for selectors written against them.
		"controller-uid": uid,
		"job-name":       job.Name,
	}
	if job.Spec.Template.Labels == nil {
		job.Spec.Template.Labels = map[string]string{}
	}
	for k, v := range labels {
		if _, ok := job.Spec.Template.Labels[k]; !ok {
			job.Spec.Template.Labels[k] = v
		}
	}
	if job.Spec.Selector == nil {
		job.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: uid}}
	}
}
