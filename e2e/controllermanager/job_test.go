package controllermanager_test

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func batchJob(name string, completions, parallelism, backoffLimit int32) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			Completions:  ptr.To(completions),
			Parallelism:  ptr.To(parallelism),
			BackoffLimit: ptr.To(backoffLimit),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "work", Image: "registry.example/work"}},
			}},
		},
	}
}

func TestJobFailsAfterBackoffLimit(t *testing.T) {
	cs := srv.Clientset(t)
	ns := newNamespace(t, cs, "job-backoff")
	ctx := context.Background()
	startKubelet(t, cs, ns, failed, nil)
	if _, err := cs.BatchV1().Jobs(ns).Create(ctx, batchJob("flaky", 1, 1, 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// backoffLimit 1: the first failure is retried after the 10s back-off,
	// the second fails the Job.
	kubectl(t, "-n", ns, "wait", "--for=condition=Failed", "job/flaky", "--timeout=60s")
	j, err := cs.BatchV1().Jobs(ns).Get(ctx, "flaky", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if j.Status.Failed != 2 || j.Status.Active != 0 {
		t.Errorf("failed=%d active=%d, want 2 and 0", j.Status.Failed, j.Status.Active)
	}
	for _, typ := range []batchv1.JobConditionType{batchv1.JobFailureTarget, batchv1.JobFailed} {
		if c := jobCondition(j, typ); c == nil || c.Reason != "BackoffLimitExceeded" {
			t.Errorf("condition %s = %+v, want True with reason BackoffLimitExceeded", typ, c)
		}
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if len(p.Finalizers) != 0 {
			t.Errorf("pod %s keeps finalizers %v", p.Name, p.Finalizers)
		}
	}
}

func TestIndexedJobCompletes(t *testing.T) {
	cs := srv.Clientset(t)
	ns := newNamespace(t, cs, "job-indexed")
	ctx := context.Background()
	startKubelet(t, cs, ns, succeeded, nil)
	j := batchJob("idx", 4, 2, 0)
	j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	if _, err := cs.BatchV1().Jobs(ns).Create(ctx, j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubectl(t, "-n", ns, "wait", "--for=condition=Complete", "job/idx", "--timeout=60s")
	got, err := cs.BatchV1().Jobs(ns).Get(ctx, "idx", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Succeeded != 4 || got.Status.CompletedIndexes != "0-3" || got.Status.CompletionTime == nil {
		t.Errorf("succeeded=%d completedIndexes=%q completionTime=%v, want 4, 0-3, set", got.Status.Succeeded, got.Status.CompletedIndexes, got.Status.CompletionTime)
	}
	if c := jobCondition(got, batchv1.JobSuccessCriteriaMet); c == nil {
		t.Errorf("no SuccessCriteriaMet condition: %+v", got.Status.Conditions)
	}
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == t && j.Status.Conditions[i].Status == corev1.ConditionTrue {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}
