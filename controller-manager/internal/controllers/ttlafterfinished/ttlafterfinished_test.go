package ttlafterfinished

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/utils/ptr"

	"trireme.dev/controller-manager/internal/fakecluster"
)

func TestSync(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	job := func(ttl *int32, finishedAgo time.Duration, cond batchv1.JobConditionType) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns", UID: "u"}}
		j.Spec.TTLSecondsAfterFinished = ttl
		if cond != "" {
			j.Status.Conditions = []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-finishedAgo))}}
		}
		return j
	}
	tests := []struct {
		name        string
		job         *batchv1.Job
		wantDeleted bool
	}{
		{"expired complete job", job(ptr.To(int32(10)), time.Minute, batchv1.JobComplete), true},
		{"expired failed job", job(ptr.To(int32(0)), time.Second, batchv1.JobFailed), true},
		{"not yet expired", job(ptr.To(int32(100)), time.Minute, batchv1.JobComplete), false},
		{"no ttl", job(nil, time.Hour, batchv1.JobComplete), false},
		{"still running", job(ptr.To(int32(0)), 0, ""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fakecluster.Client(tt.job)
			f := informers.NewSharedInformerFactory(cs, 0)
			c, err := New(Options{Client: cs, Jobs: f.Batch().V1().Jobs(), Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			fakecluster.Start(t, f)
			if err := c.sync(context.Background(), "ns/j"); err != nil {
				t.Fatal(err)
			}
			_, err = cs.BatchV1().Jobs("ns").Get(context.Background(), "j", metav1.GetOptions{})
			if deleted := err != nil; deleted != tt.wantDeleted {
				t.Errorf("deleted = %v, want %v", deleted, tt.wantDeleted)
			}
		})
	}
}
