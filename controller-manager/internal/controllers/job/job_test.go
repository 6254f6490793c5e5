package job

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"trireme.dev/controller-manager/internal/fakecluster"
	"trireme.dev/controller-manager/internal/ownership"
)

func TestIndexSet(t *testing.T) {
	tests := []struct {
		in, want    string
		completions int
	}{
		{"", "", 10},
		{"0,1,2,5", "0-2,5", 10},
		{"3-5,1", "1,3-5", 10},
		{"8-12", "8-9", 10},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := parseIndexes(tt.in, tt.completions).String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func newJob(mutate func(*batchv1.Job)) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns", UID: "job-uid"},
		Spec: batchv1.JobSpec{
			Parallelism:  ptr.To(int32(2)),
			Completions:  ptr.To(int32(2)),
			BackoffLimit: ptr.To(int32(0)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"job": "pi"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"job": "pi"}},
				Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "i"}}},
			},
		},
	}
	if mutate != nil {
		mutate(j)
	}
	return j
}

func jobPod(name string, j *batchv1.Job, phase corev1.PodPhase, exitCode int32, index string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name),
		Labels: map[string]string{"job": "pi"}, Finalizers: []string{TrackingFinalizer},
		OwnerReferences: []metav1.OwnerReference{ownership.Ref(j, Kind)}}}
	if index != "" {
		p.Annotations = map[string]string{IndexAnnotation: index}
	}
	p.Status.Phase = phase
	if phase == corev1.PodFailed || phase == corev1.PodSucceeded {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: exitCode, FinishedAt: metav1.NewTime(time.Now().Add(-time.Hour))}}}}
	}
	return p
}

func cond(j *batchv1.Job) string {
	var s string
	for _, c := range j.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			s += fmt.Sprintf("%s/%s ", c.Type, c.Reason)
		}
	}
	return s
}

func TestSync(t *testing.T) {
	failJobPolicy := func(j *batchv1.Job) {
		j.Spec.BackoffLimit = ptr.To(int32(6))
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
			Action:      batchv1.PodFailurePolicyActionFailJob,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
		}}}
	}
	indexedJob := func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Completions = ptr.To(int32(3))
	}
	tests := []struct {
		name        string
		job         *batchv1.Job
		pods        func(j *batchv1.Job) []*corev1.Pod
		wantCreates int
		// wantNew, when set, are the indexes of the pods created.
		wantNew    []string
		wantStatus func(t *testing.T, j *batchv1.Job)
	}{
		{
			name:        "starts parallelism pods",
			job:         newJob(nil),
			wantCreates: 2,
			wantStatus: func(t *testing.T, j *batchv1.Job) {
				if j.Status.Active != 2 || j.Status.StartTime == nil {
					t.Errorf("active %d startTime %v", j.Status.Active, j.Status.StartTime)
				}
			},
		},
		{
			name: "failure past backoffLimit fails the job once its pods are gone",
			job:  newJob(func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To(int32(1)) }),
			pods: func(j *batchv1.Job) []*corev1.Pod { return []*corev1.Pod{jobPod("a", j, corev1.PodFailed, 1, "")} },
			wantStatus: func(t *testing.T, j *batchv1.Job) {
				if got, want := cond(j), "FailureTarget/BackoffLimitExceeded Failed/BackoffLimitExceeded "; got != want {
					t.Errorf("conditions %q, want %q", got, want)
				}
				if j.Status.Failed != 1 || len(j.Status.UncountedTerminatedPods.Failed) != 0 {
					t.Errorf("failed %d uncounted %v", j.Status.Failed, j.Status.UncountedTerminatedPods)
				}
			},
		},
		{
			name: "podFailurePolicy FailJob on exit code",
			job:  newJob(failJobPolicy),
			pods: func(j *batchv1.Job) []*corev1.Pod {
				return []*corev1.Pod{jobPod("a", j, corev1.PodFailed, 42, ""), jobPod("b", j, corev1.PodRunning, 0, "")}
			},
			wantStatus: func(t *testing.T, j *batchv1.Job) {
				if got, want := cond(j), "FailureTarget/PodFailurePolicy "; got != want {
					t.Errorf("conditions %q, want %q (Failed waits for pod b)", got, want)
				}
			},
		},
		{
			name: "completions reached completes",
			job:  newJob(nil),
			pods: func(j *batchv1.Job) []*corev1.Pod {
				return []*corev1.Pod{jobPod("a", j, corev1.PodSucceeded, 0, ""), jobPod("b", j, corev1.PodSucceeded, 0, "")}
			},
			wantStatus: func(t *testing.T, j *batchv1.Job) {
				if got, want := cond(j), "SuccessCriteriaMet/CompletionsReached Complete/CompletionsReached "; got != want {
					t.Errorf("conditions %q, want %q", got, want)
				}
				if j.Status.Succeeded != 2 || j.Status.CompletionTime == nil {
					t.Errorf("succeeded %d completionTime %v", j.Status.Succeeded, j.Status.CompletionTime)
				}
			},
		},
		{
			name: "indexed job starts the missing indexes",
			job:  newJob(indexedJob),
			pods: func(j *batchv1.Job) []*corev1.Pod {
				return []*corev1.Pod{jobPod("a", j, corev1.PodSucceeded, 0, "0")}
			},
			wantCreates: 2,
			wantStatus: func(t *testing.T, j *batchv1.Job) {
				if j.Status.CompletedIndexes != "0" || j.Status.Succeeded != 1 || j.Status.Active != 2 {
					t.Errorf("completedIndexes %q succeeded %d active %d", j.Status.CompletedIndexes, j.Status.Succeeded, j.Status.Active)
				}
			},
		},
		{
			name: "success policy ends an indexed job early",
			job: newJob(func(j *batchv1.Job) {
				indexedJob(j)
				j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededIndexes: ptr.To("0")}}}
			}),
			pods: func(j *batchv1.Job) []*corev1.Pod {
				return []*corev1.Pod{jobPod("a", j, corev1.PodSucceeded, 0, "0")}
			},
			wantStatus: func(t *testing.T, j *batchv1.Job) {
				if got, want := cond(j), "SuccessCriteriaMet/SuccessPolicy Complete/SuccessPolicy "; got != want {
					t.Errorf("conditions %q, want %q", got, want)
				}
			},
		},
		{
			name: "backoffLimitPerIndex fails one index and runs the others",
			job: newJob(func(j *batchv1.Job) {
				indexedJob(j)
				j.Spec.Parallelism = ptr.To(int32(3))
				j.Spec.BackoffLimit = nil
				j.Spec.BackoffLimitPerIndex = ptr.To(int32(0))
			}),
			pods: func(j *batchv1.Job) []*corev1.Pod {
				return []*corev1.Pod{jobPod("a", j, corev1.PodFailed, 1, "1")}
			},
			wantCreates: 2,
			wantStatus: func(t *testing.T, j *batchv1.Job) {
				if ptr.Deref(j.Status.FailedIndexes, "") != "1" || j.Status.Failed != 1 || cond(j) != "" {
					t.Errorf("failedIndexes %v failed %d conditions %q", j.Status.FailedIndexes, j.Status.Failed, cond(j))
				}
			},
		},
		{
			name: "an Indexed Job's back-off holds every index, not only the failed one",
			job: newJob(func(j *batchv1.Job) {
				indexedJob(j)
				j.Spec.BackoffLimit = ptr.To(int32(6))
			}),
			pods: func(j *batchv1.Job) []*corev1.Pod {
				failed := jobPod("b", j, corev1.PodFailed, 1, "1")
				failed.Status.ContainerStatuses[0].State.Terminated.FinishedAt = metav1.Now()
				return []*corev1.Pod{jobPod("a", j, corev1.PodRunning, 0, "0"), failed}
			},
			wantStatus: func(t *testing.T, j *batchv1.Job) {
				if j.Status.Active != 1 || j.Status.Failed != 1 {
					t.Errorf("active %d failed %d, want 1 and 1", j.Status.Active, j.Status.Failed)
				}
			},
		},
		{
			name: "after the back-off the lowest pending index, the failed one, comes first",
			job: newJob(func(j *batchv1.Job) {
				indexedJob(j)
				j.Spec.BackoffLimit = ptr.To(int32(6))
			}),
			pods: func(j *batchv1.Job) []*corev1.Pod {
				return []*corev1.Pod{jobPod("a", j, corev1.PodRunning, 0, "0"), jobPod("b", j, corev1.PodFailed, 1, "1")}
			},
			wantCreates: 1,
			wantNew:     []string{"1"},
			wantStatus:  func(t *testing.T, j *batchv1.Job) {},
		},
		{
			name: "suspended job runs nothing",
			job:  newJob(func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) }),
			wantStatus: func(t *testing.T, j *batchv1.Job) {
				if got, want := cond(j), "Suspended/JobSuspended "; got != want || j.Status.StartTime != nil {
					t.Errorf("conditions %q (want %q), startTime %v", got, want, j.Status.StartTime)
				}
			},
		},
		{
			name: "past activeDeadlineSeconds",
			job: newJob(func(j *batchv1.Job) {
				j.Spec.ActiveDeadlineSeconds = ptr.To(int64(10))
				j.Status.StartTime = ptr.To(metav1.NewTime(time.Now().Add(-time.Minute)))
			}),
			wantStatus: func(t *testing.T, j *batchv1.Job) {
				if got, want := cond(j), "FailureTarget/DeadlineExceeded Failed/DeadlineExceeded "; got != want {
					t.Errorf("conditions %q, want %q", got, want)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := []runtime.Object{tt.job}
			if tt.pods != nil {
				for _, p := range tt.pods(tt.job) {
					objs = append(objs, p)
				}
			}
			cs := fakecluster.Client(objs...)
			f := informers.NewSharedInformerFactory(cs, 0)
			c, err := New(Options{Client: cs, Jobs: f.Batch().V1().Jobs(), Pods: f.Core().V1().Pods(), Recorder: record.NewFakeRecorder(100)})
			if err != nil {
				t.Fatal(err)
			}
			fakecluster.Start(t, f)
			cs.ClearActions()
			if err := c.sync(context.Background(), "ns/pi"); err != nil {
				t.Fatalf("sync: %v", err)
			}
			creates := 0
			for _, a := range fakecluster.Actions(cs) {
				if a == "create pods" {
					creates++
				}
			}
			if creates != tt.wantCreates {
				t.Errorf("created %d pods, want %d (%v)", creates, tt.wantCreates, fakecluster.Actions(cs))
			}
			got, _ := cs.BatchV1().Jobs("ns").Get(context.Background(), "pi", metav1.GetOptions{})
			tt.wantStatus(t, got)
			pods, _ := cs.CoreV1().Pods("ns").List(context.Background(), metav1.ListOptions{})
			var created []string
			for _, p := range pods.Items {
				if p.Status.Phase == "" {
					created = append(created, p.Annotations[IndexAnnotation])
				}
			}
			if tt.wantNew != nil && !slices.Equal(created, tt.wantNew) {
				t.Errorf("created pods of indexes %v, want %v", created, tt.wantNew)
			}
			for _, p := range pods.Items {
				if (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) && len(p.Finalizers) > 0 {
					t.Errorf("finished pod %s keeps its finalizer", p.Name)
				}
				if p.Status.Phase == "" && (len(p.Finalizers) != 1 || p.Finalizers[0] != TrackingFinalizer) {
					t.Errorf("new pod %s finalizers %v", p.Name, p.Finalizers)
				}
			}
		})
	}
}

// TestAdoptAndRelease follows upstream's conformance spec "should adopt
// matching orphans and release non-matching pods": a running controller
// takes back a pod whose owner reference was removed, and gives up, with
// its tracking finalizer, a pod whose labels stop matching.
func TestAdoptAndRelease(t *testing.T) {
	job := newJob(func(j *batchv1.Job) { j.Spec.Completions = ptr.To(int32(4)) })
	running := func(name string) *corev1.Pod { return jobPod(name, job, corev1.PodRunning, 0, "") }
	cs := fakecluster.Client(job, running("a"), running("b"))
	f := informers.NewSharedInformerFactory(cs, 0)
	c, err := New(Options{Client: cs, Jobs: f.Batch().V1().Jobs(), Pods: f.Core().V1().Pods(), Recorder: record.NewFakeRecorder(100)})
	if err != nil {
		t.Fatal(err)
	}
	fakecluster.Start(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Run(ctx, 1)

	update := func(mutate func(*corev1.Pod)) {
		t.Helper()
		p, err := cs.CoreV1().Pods("ns").Get(ctx, "a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mutate(p)
		if _, err := cs.CoreV1().Pods("ns").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitPod := func(what string, cond func(p *corev1.Pod) bool) {
		t.Helper()
		var p *corev1.Pod
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if p, err = cs.CoreV1().Pods("ns").Get(ctx, "a", metav1.GetOptions{}); err == nil && cond(p) {
				return
			}
		}
		t.Fatalf("pod a never %s: owners %v finalizers %v", what, p.OwnerReferences, p.Finalizers)
	}

	update(func(p *corev1.Pod) { p.OwnerReferences, p.Finalizers = nil, nil })
	waitPod("adopted with the tracking finalizer", func(p *corev1.Pod) bool {
		ref := metav1.GetControllerOf(p)
		return ref != nil && ref.UID == job.UID && slices.Contains(p.Finalizers, TrackingFinalizer)
	})
	update(func(p *corev1.Pod) { p.Labels = nil })
	waitPod("released without the tracking finalizer", func(p *corev1.Pod) bool {
		return len(p.OwnerReferences) == 0 && len(p.Finalizers) == 0
	})
}

func TestReleaseOrphan(t *testing.T) {
	job := newJob(nil)
	orphan := func(mutate func(p *corev1.Pod)) *corev1.Pod {
		p := jobPod("a", job, corev1.PodRunning, 0, "")
		p.OwnerReferences = nil
		p.Labels = map[string]string{"other": "x"}
		p.ResourceVersion = "7"
		if mutate != nil {
			mutate(p)
		}
		return p
	}
	tests := []struct {
		name          string
		pod           *corev1.Pod
		wantFinalizer bool
	}{
		{"orphan loses a leftover finalizer", orphan(nil), false},
		{"pod of a finished Job loses it", orphan(func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{ownership.Ref(job, Kind)} }), false},
		{"pod of another kind of controller keeps it", orphan(func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ReplicationController", Name: "pi", UID: "job-uid", Controller: ptr.To(true)}}
		}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			finished := job.DeepCopy()
			finished.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
			cs := fakecluster.Client(finished, tt.pod)
			f := informers.NewSharedInformerFactory(cs, 0)
			c, err := New(Options{Client: cs, Jobs: f.Batch().V1().Jobs(), Pods: f.Core().V1().Pods(), Recorder: record.NewFakeRecorder(100)})
			if err != nil {
				t.Fatal(err)
			}
			fakecluster.Start(t, f)
			if err := c.sync(context.Background(), orphanPrefix+"ns/a"); err != nil {
				t.Fatalf("sync: %v", err)
			}
			got, _ := cs.CoreV1().Pods("ns").Get(context.Background(), "a", metav1.GetOptions{})
			if has := slices.Contains(got.Finalizers, TrackingFinalizer); has != tt.wantFinalizer {
				t.Errorf("finalizers %v, want the tracking finalizer: %v", got.Finalizers, tt.wantFinalizer)
			}
		})
	}
}
