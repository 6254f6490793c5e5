package controllermanager_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testwait"
)

func TestCronJobFiresOnScheduleAndTTLDeletesJob(t *testing.T) {
	cs := srv.Clientset(t)
	ns := newNamespace(t, cs, "cronjob")
	ctx := context.Background()
	startKubelet(t, cs, ns, succeeded, nil)
	j := batchJob("tick", 1, 1, 0)
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "tick"},
		Spec: batchv1.CronJobSpec{
			Schedule:          "* * * * *",
			TimeZone:          ptr.To("Etc/UTC"),
			ConcurrencyPolicy: batchv1.ForbidConcurrent,
			JobTemplate:       batchv1.JobTemplateSpec{Spec: j.Spec},
		},
	}
	cj.Spec.JobTemplate.Spec.TTLSecondsAfterFinished = ptr.To(int32(1))
	if _, err := cs.BatchV1().CronJobs(ns).Create(ctx, cj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var jobName string
	testwait.For(t, 70*time.Second, "the CronJob's first Job", func(ctx context.Context) (bool, error) {
		got, err := cs.BatchV1().CronJobs(ns).Get(ctx, "tick", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got.Status.LastScheduleTime == nil {
			return false, nil
		}
		jobName = "tick-" + itoa(got.Status.LastScheduleTime.Unix()/60)
		return true, nil
	})
	job, err := cs.BatchV1().Jobs(ns).Get(ctx, jobName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("job %s: %v", jobName, err)
	}
	if job.Annotations[batchv1.CronJobScheduledTimestampAnnotation] == "" {
		t.Errorf("job lacks the scheduled-timestamp annotation: %v", job.Annotations)
	}
	// The Job succeeds, the CronJob records it, and one second later the
	// TTL controller deletes it.
	testwait.For(t, 30*time.Second, "the CronJob to record its successful Job", func(ctx context.Context) (bool, error) {
		got, err := cs.BatchV1().CronJobs(ns).Get(ctx, "tick", metav1.GetOptions{})
		return err == nil && got.Status.LastSuccessfulTime != nil && len(got.Status.Active) == 0, err
	})
	// Foreground deletion leaves the Job to the garbage collector once its
	// pods are gone, so a deletion timestamp is what this controller owes.
	testwait.For(t, 30*time.Second, "ttl-after-finished to delete job "+jobName, func(ctx context.Context) (bool, error) {
		got, err := cs.BatchV1().Jobs(ns).Get(ctx, jobName, metav1.GetOptions{})
		return err != nil || got.DeletionTimestamp != nil, nil
	})
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
