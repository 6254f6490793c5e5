package job

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// failurePolicyAction returns the action of the first podFailurePolicy rule
// pod matches, the message for a FailJob, and whether any rule matched.
func failurePolicyAction(job *batchv1.Job, pod *corev1.Pod) (batchv1.PodFailurePolicyAction, string, bool) {
	if job.Spec.PodFailurePolicy == nil {
		return "", "", false
	}
	for i, rule := range job.Spec.PodFailurePolicy.Rules {
		if req := rule.OnExitCodes; req != nil {
			statuses := append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...)
			for _, cs := range statuses {
				term := cs.State.Terminated
				if term == nil || term.ExitCode == 0 {
					continue
				}
				if req.ContainerName != nil && *req.ContainerName != cs.Name {
					continue
				}
				in := slices.Contains(req.Values, term.ExitCode)
				if (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn) == in {
					msg := fmt.Sprintf("Container %s for pod %s/%s failed with exit code %d matching %s rule at index %d",
						cs.Name, pod.Namespace, pod.Name, term.ExitCode, rule.Action, i)
					return rule.Action, msg, true
				}
			}
		}
		for _, pattern := range rule.OnPodConditions {
			want := pattern.Status
			if want == "" {
				want = corev1.ConditionTrue
			}
			for _, c := range pod.Status.Conditions {
				if c.Type == pattern.Type && c.Status == want {
					msg := fmt.Sprintf("Pod %s/%s has condition %s matching %s rule at index %d",
						pod.Namespace, pod.Name, c.Type, rule.Action, i)
					return rule.Action, msg, true
				}
			}
		}
	}
	return "", "", false
}

// successPolicyMatched returns the index of the first successPolicy rule
// completed satisfies, or -1.
func successPolicyMatched(job *batchv1.Job, completed indexSet) int {
	if job.Spec.SuccessPolicy == nil || job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		return -1
	}
	completions := int(completionsOf(job))
	for i, rule := range job.Spec.SuccessPolicy.Rules {
		var want indexSet
		if rule.SucceededIndexes != nil {
			want = parseIndexes(*rule.SucceededIndexes, completions)
		} else {
			want = indexSet{}
			for j := range completions {
				want[j] = true
			}
		}
		done := 0
		for idx := range want {
			if completed[idx] {
				done++
			}
		}
		if rule.SucceededCount != nil {
			if int32(done) >= *rule.SucceededCount {
				return i
			}
			continue
		}
		if done == len(want) && len(want) > 0 {
			return i
		}
	}
	return -1
}
