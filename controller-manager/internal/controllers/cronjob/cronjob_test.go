package cronjob

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"trireme.dev/controller-manager/internal/fakecluster"
	"trireme.dev/controller-manager/internal/ownership"
)

var created = time.Date(2026, 1, 1, 10, 0, 30, 0, time.UTC)

func cronJob(schedule string, mutate func(*batchv1.CronJob)) *batchv1.CronJob {
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "tick", Namespace: "ns", UID: "cj-uid", CreationTimestamp: metav1.NewTime(created)},
		Spec: batchv1.CronJobSpec{
			Schedule: schedule,
			TimeZone: ptr.To("Etc/UTC"),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "i"}}},
			}}},
		},
	}
	if mutate != nil {
		mutate(cj)
	}
	return cj
}

func TestMostRecent(t *testing.T) {
	tests := []struct {
		name       string
		cj         *batchv1.CronJob
		now        time.Time
		wantSched  string
		wantNext   string
		wantMissed int
	}{
		{"not yet due", cronJob("* * * * *", nil), created.Add(20 * time.Second), "", "10:01", 0},
		{"due", cronJob("* * * * *", nil), created.Add(40 * time.Second), "10:01", "10:02", 1},
		{"several missed, latest wins", cronJob("*/5 * * * *", nil), created.Add(16 * time.Minute), "10:15", "10:20", 3},
		{"starting deadline limits the look-back", cronJob("* * * * *", func(cj *batchv1.CronJob) {
			cj.Spec.StartingDeadlineSeconds = ptr.To(int64(90))
		}), created.Add(time.Hour), "11:00", "11:01", 1},
		{"time zone", cronJob("0 12 * * *", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Europe/Paris") }), created.Add(2 * time.Hour), "11:00", "11:00", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sched, loc, err := Schedule(tt.cj)
			if err != nil {
				t.Fatal(err)
			}
			got, next, missed := mostRecent(tt.cj, sched, tt.now.In(loc))
			gotS := ""
			if got != nil {
				gotS = got.UTC().Format("15:04")
			}
			if gotS != tt.wantSched || next.UTC().Format("15:04") != tt.wantNext || missed != tt.wantMissed {
				t.Errorf("scheduled %q next %s missed %d, want %q %s %d", gotS, next.UTC().Format("15:04"), missed, tt.wantSched, tt.wantNext, tt.wantMissed)
			}
		})
	}
}

func TestSync(t *testing.T) {
	due := created.Add(40 * time.Second)
	activeJob := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "tick-1", Namespace: "ns", UID: "j1"}}
	tests := []struct {
		name      string
		cj        *batchv1.CronJob
		objs      []runtime.Object
		wantJobs  int
		wantEvent string
	}{
		{"creates the due job", cronJob("* * * * *", nil), nil, 1, "Normal SuccessfulCreate"},
		{"invalid schedule warns", cronJob("every minute", nil), nil, 0, "Warning UnparseableSchedule"},
		{"unknown time zone warns", cronJob("* * * * *", func(cj *batchv1.CronJob) { cj.Spec.TimeZone = ptr.To("Mars/Olympus") }), nil, 0, "Warning UnknownTimeZone"},
		{"suspended", cronJob("* * * * *", func(cj *batchv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }), nil, 0, ""},
		{"forbid skips while one runs", cronJob("* * * * *", func(cj *batchv1.CronJob) {
			cj.Spec.ConcurrencyPolicy = batchv1.ForbidConcurrent
			activeJob.OwnerReferences = []metav1.OwnerReference{ownership.Ref(cj, Kind)}
		}), []runtime.Object{activeJob}, 1, "Normal JobAlreadyActive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fakecluster.Client(append([]runtime.Object{tt.cj}, tt.objs...)...)
			f := informers.NewSharedInformerFactory(cs, 0)
			rec := record.NewFakeRecorder(100)
			c, err := New(Options{Client: cs, CronJobs: f.Batch().V1().CronJobs(), Jobs: f.Batch().V1().Jobs(), Recorder: rec, Now: func() time.Time { return due }})
			if err != nil {
				t.Fatal(err)
			}
			fakecluster.Start(t, f)
			if err := c.sync(context.Background(), "ns/tick"); err != nil {
				t.Fatalf("sync: %v", err)
			}
			jobs, _ := cs.BatchV1().Jobs("ns").List(context.Background(), metav1.ListOptions{})
			if len(jobs.Items) != tt.wantJobs {
				t.Errorf("jobs = %d, want %d", len(jobs.Items), tt.wantJobs)
			}
			var events []string
			for len(rec.Events) > 0 {
				events = append(events, <-rec.Events)
			}
			if tt.wantEvent != "" && !strings.Contains(strings.Join(events, "\n"), tt.wantEvent) {
				t.Errorf("events %v, want %q", events, tt.wantEvent)
			}
		})
	}
}
