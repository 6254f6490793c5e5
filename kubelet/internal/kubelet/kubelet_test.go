package kubelet

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	critesting "k8s.io/cri-api/pkg/apis/testing"
	"k8s.io/utils/ptr"

	"trireme.dev/kubelet/internal/podconfig"
	"trireme.dev/kubelet/internal/volume"
)

// stubProber answers every probe question with its fields.
type stubProber struct{ notReady, livenessFailed map[string]bool }

func (p *stubProber) UpdatePod(*corev1.Pod, *corev1.PodStatus) {}
func (p *stubProber) RemovePod(types.UID)                      {}
func (p *stubProber) Ready(id string) bool                     { return !p.notReady[id] }
func (p *stubProber) Started(string) bool                      { return true }
func (p *stubProber) LivenessFailed(id string) bool            { return p.livenessFailed[id] }

type fixture struct {
	k       *Kubelet
	runtime *critesting.FakeRuntimeService
	images  *critesting.FakeImageService
	client  *fake.Clientset
	prober  *stubProber
}

func newFixture(t *testing.T, objects ...*corev1.Pod) *fixture {
	t.Helper()
	rs := critesting.NewFakeRuntimeService()
	is := critesting.NewFakeImageService()
	is.SetFakeImages([]string{"busybox"})
	var objs []any
	_ = objs
	client := fake.NewClientset()
	for _, p := range objects {
		if _, err := client.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	prober := &stubProber{notReady: map[string]bool{}, livenessFailed: map[string]bool{}}
	vols := volume.New(root, client, nil)
	k := New(Config{
		NodeName:   "node-1",
		NodeIPs:    []net.IP{net.ParseIP("10.0.0.1")},
		Client:     client,
		Runtime:    rs,
		Images:     is,
		PodLogsDir: t.TempDir(),
		Volumes:    vols,
		Prober:     prober,
	}, logr.Discard())
	vols.SetFields(k)
	return &fixture{k: k, runtime: rs, images: is, client: client, prober: prober}
}

func testPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name + "-uid")},
		Spec: corev1.PodSpec{
			NodeName:                      "node-1",
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers:                    []corev1.Container{{Name: "app", Image: "busybox", ImagePullPolicy: corev1.PullIfNotPresent}},
		},
	}
}

// syncedWorker gives pod a worker, as the kubelet would, and syncs it
// once: its sandbox and containers run.
func (f *fixture) syncedWorker(t *testing.T, pod *corev1.Pod) *podWorker {
	w := f.idleWorker(pod)
	f.sync(t, w, pod)
	return w
}

// idleWorker gives pod a worker of the kubelet's that no goroutine runs:
// its wakes stay in the channel, for the test to see.
func (f *fixture) idleWorker(pod *corev1.Pod) *podWorker {
	w := newPodWorker(pod.UID)
	w.update(pod)
	<-w.wakeCh
	f.k.workers[pod.UID] = w
	return w
}

// sync runs one sync of pod, as its worker would.
func (f *fixture) sync(t *testing.T, w *podWorker, pod *corev1.Pod) time.Duration {
	t.Helper()
	requeue, _, err := f.k.syncPod(context.Background(), w, pod, false)
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return requeue
}

func (f *fixture) containers(name string) []*critesting.FakeContainer {
	f.runtime.Lock()
	defer f.runtime.Unlock()
	var out []*critesting.FakeContainer
	for _, c := range f.runtime.Containers {
		if c.Labels[podconfig.LabelContainerName] == name {
			out = append(out, c)
		}
	}
	return out
}

func (f *fixture) exit(c *critesting.FakeContainer, code int32) {
	f.runtime.Lock()
	defer f.runtime.Unlock()
	c.State = runtimeapi.ContainerState_CONTAINER_EXITED
	c.ExitCode = code
	c.FinishedAt = time.Now().UnixNano()
}

func (f *fixture) apiPod(t *testing.T, name string) *corev1.Pod {
	t.Helper()
	p, err := f.client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSyncStartsSandboxInitAndAppContainers(t *testing.T) {
	pod := testPod("web")
	pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
	f := newFixture(t, pod)
	w := newPodWorker(pod.UID)
	f.sync(t, w, pod)
	if n := len(f.runtime.Sandboxes); n != 1 {
		t.Fatalf("%d sandboxes, want 1", n)
	}
	if n := len(f.containers("app")); n != 0 {
		t.Fatalf("app started before its init container finished")
	}
	inits := f.containers("init")
	if len(inits) != 1 || inits[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("init container not running: %v", inits)
	}
	if got := f.apiPod(t, "web").Status.Phase; got != corev1.PodPending {
		t.Errorf("phase while initializing %s, want Pending", got)
	}
	f.exit(inits[0], 0)
	f.sync(t, w, pod)
	apps := f.containers("app")
	if len(apps) != 1 || apps[0].State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		t.Fatalf("app container not running after init: %v", apps)
	}
	st := f.apiPod(t, "web").Status
	if st.Phase != corev1.PodRunning || st.PodIP != critesting.FakePodSandboxIPs[0] || st.HostIP != "10.0.0.1" {
		t.Errorf("status: phase %s podIP %s hostIP %s", st.Phase, st.PodIP, st.HostIP)
	}
	for _, c := range []corev1.PodConditionType{corev1.PodReady, corev1.ContainersReady, corev1.PodInitialized, corev1.PodReadyToStartContainers, corev1.PodScheduled} {
		if !hasConditionTrue(st.Conditions, c) {
			t.Errorf("condition %s not true: %+v", c, st.Conditions)
		}
	}
	if st.QOSClass != corev1.PodQOSBestEffort {
		t.Errorf("qos %s", st.QOSClass)
	}
}

func hasConditionTrue(cs []corev1.PodCondition, t corev1.PodConditionType) bool {
	for _, c := range cs {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func TestRestartPolicy(t *testing.T) {
	tests := []struct {
		name        string
		policy      corev1.RestartPolicy
		exitCode    int32
		wantRestart bool
		wantPhase   corev1.PodPhase
	}{
		{"Always restarts a success", corev1.RestartPolicyAlways, 0, true, corev1.PodRunning},
		{"Always restarts a failure", corev1.RestartPolicyAlways, 1, true, corev1.PodRunning},
		{"OnFailure restarts a failure", corev1.RestartPolicyOnFailure, 2, true, corev1.PodRunning},
		{"OnFailure leaves a success", corev1.RestartPolicyOnFailure, 0, false, corev1.PodSucceeded},
		{"Never leaves a failure", corev1.RestartPolicyNever, 1, false, corev1.PodFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := testPod("p")
			pod.Spec.RestartPolicy = tc.policy
			f := newFixture(t, pod)
			w := newPodWorker(pod.UID)
			f.sync(t, w, pod)
			f.exit(f.containers("app")[0], tc.exitCode)
			f.sync(t, w, pod)
			n := len(f.containers("app"))
			if tc.wantRestart != (n == 2) {
				t.Fatalf("%d instances, want restart %v", n, tc.wantRestart)
			}
			st := f.apiPod(t, "p").Status
			if st.Phase != tc.wantPhase {
				t.Errorf("phase %s, want %s", st.Phase, tc.wantPhase)
			}
			if tc.wantRestart && st.ContainerStatuses[0].RestartCount != 1 {
				t.Errorf("restartCount %d, want 1", st.ContainerStatuses[0].RestartCount)
			}
		})
	}
}

func TestCrashLoopBackOff(t *testing.T) {
	pod := testPod("crash")
	f := newFixture(t, pod)
	w := newPodWorker(pod.UID)
	f.sync(t, w, pod)
	f.exit(f.containers("app")[0], 1)
	f.sync(t, w, pod) // first restart is immediate
	var second *critesting.FakeContainer
	for _, c := range f.containers("app") {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			second = c
		}
	}
	f.exit(second, 1)
	requeue := f.sync(t, w, pod)
	if n := len(f.containers("app")); n != 2 {
		t.Fatalf("%d instances: restarted inside its back-off", n)
	}
	if requeue <= 0 || requeue > 11*time.Second {
		t.Errorf("requeue after %s, want within the 10s back-off", requeue)
	}
	cs := f.apiPod(t, "crash").Status.ContainerStatuses[0]
	if cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" || cs.LastTerminationState.Terminated == nil {
		t.Errorf("status %+v", cs)
	}
}

func TestAdoptsRunningContainers(t *testing.T) {
	pod := testPod("adopt")
	f := newFixture(t, pod)
	w := newPodWorker(pod.UID)
	f.sync(t, w, pod)
	before := len(f.runtime.GetCalls())
	// A restarted kubelet: new worker, same runtime.
	k2 := New(f.k.cfg, logr.Discard())
	if _, _, err := k2.syncPod(context.Background(), newPodWorker(pod.UID), pod, false); err != nil {
		t.Fatal(err)
	}
	for _, call := range f.runtime.GetCalls()[before:] {
		switch call {
		case "RunPodSandbox", "CreateContainer", "StartContainer", "StopContainer", "StopPodSandbox":
			t.Errorf("restarted kubelet called %s on a healthy pod", call)
		}
	}
}

func TestLivenessFailureRestarts(t *testing.T) {
	pod := testPod("live")
	f := newFixture(t, pod)
	w := newPodWorker(pod.UID)
	f.sync(t, w, pod)
	first := f.containers("app")[0]
	f.prober.livenessFailed[first.Id] = true
	f.sync(t, w, pod) // kills
	f.sync(t, w, pod) // restarts
	if n := len(f.containers("app")); n != 2 {
		t.Fatalf("%d instances, want the container restarted", n)
	}
}

func TestDeletionStopsAndDeletesPod(t *testing.T) {
	pod := testPod("gone")
	f := newFixture(t, pod)
	w := newPodWorker(pod.UID)
	f.sync(t, w, pod)
	deleting := pod.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	deleting.DeletionGracePeriodSeconds = ptr.To[int64](0)
	f.sync(t, w, deleting)
	for _, c := range f.containers("app") {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			t.Errorf("container %s still running", c.Id)
		}
	}
	if _, err := f.client.CoreV1().Pods("default").Get(context.Background(), "gone", metav1.GetOptions{}); err == nil {
		t.Errorf("pod still in the API after termination")
	}
}

func TestRemovedPodIsTornDown(t *testing.T) {
	pod := testPod("orphan")
	f := newFixture(t, pod)
	w := newPodWorker(pod.UID)
	f.sync(t, w, pod)
	_, done, err := f.k.syncPod(context.Background(), w, nil, true)
	if err != nil || !done {
		t.Fatalf("done %v err %v", done, err)
	}
	if n := len(f.runtime.Sandboxes) + len(f.runtime.Containers); n != 0 {
		t.Errorf("%d runtime objects left", n)
	}
}

func TestImageNeverPulledIsReported(t *testing.T) {
	pod := testPod("noimg")
	pod.Spec.Containers[0].Image = "missing"
	pod.Spec.Containers[0].ImagePullPolicy = corev1.PullNever
	f := newFixture(t, pod)
	w := newPodWorker(pod.UID)
	if _, _, err := f.k.syncPod(context.Background(), w, pod, false); err == nil {
		t.Fatal("sync succeeded with a missing image")
	}
	cs := f.apiPod(t, "noimg").Status.ContainerStatuses[0]
	if cs.State.Waiting == nil || cs.State.Waiting.Reason != "ErrImageNeverPull" {
		t.Errorf("waiting %+v", cs.State.Waiting)
	}
}

func TestDeadContainersAreCollected(t *testing.T) {
	pod := testPod("gc")
	f := newFixture(t, pod)
	w := newPodWorker(pod.UID)
	f.sync(t, w, pod)
	for i := 0; i < 4; i++ {
		for _, c := range f.containers("app") {
			if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
				f.exit(c, 0)
			}
		}
		f.k.backoff.Reset(backoffKey(pod, &pod.Spec.Containers[0]))
		f.sync(t, w, pod)
	}
	if n := len(f.containers("app")); n != deadInstancesKept {
		t.Errorf("%d instances kept, want %d", n, deadInstancesKept)
	}
	if got := f.apiPod(t, "gc").Status.ContainerStatuses[0].RestartCount; got != 4 {
		t.Errorf("restartCount %d, want 4", got)
	}
}

func TestActiveDeadlineFailsPod(t *testing.T) {
	pod := testPod("deadline")
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](1)
	pod.Status.StartTime = &metav1.Time{Time: time.Now().Add(-time.Minute)}
	f := newFixture(t, pod)
	w := newPodWorker(pod.UID)
	f.sync(t, w, pod)
	st := f.apiPod(t, "deadline").Status
	if st.Phase != corev1.PodFailed || st.Reason != "DeadlineExceeded" {
		t.Errorf("phase %s reason %s", st.Phase, st.Reason)
	}
}

func TestReadinessProbeGatesReady(t *testing.T) {
	pod := testPod("ready")
	pod.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
	f := newFixture(t, pod)
	w := newPodWorker(pod.UID)
	f.sync(t, w, pod)
	id := f.containers("app")[0].Id
	f.prober.notReady[id] = true
	f.sync(t, w, pod)
	st := f.apiPod(t, "ready").Status
	if hasConditionTrue(st.Conditions, corev1.PodReady) || st.ContainerStatuses[0].Ready {
		t.Fatalf("Ready while the readiness probe has not passed: %+v", st.Conditions)
	}
	delete(f.prober.notReady, id)
	f.sync(t, w, pod)
	if st := f.apiPod(t, "ready").Status; !hasConditionTrue(st.Conditions, corev1.PodReady) {
		t.Errorf("not Ready after the probe passed: %+v", st.Conditions)
	}
}

// TestImageChangeRestartsContainer: a running container whose image the
// pod's spec changed is restarted with the new image, whatever the
// restart policy, as upstream restarts a container whose spec changed.
func TestImageChangeRestartsContainer(t *testing.T) {
	for _, policy := range []corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever} {
		t.Run(string(policy), func(t *testing.T) {
			pod := testPod("img")
			pod.Spec.RestartPolicy = policy
			f := newFixture(t, pod)
			f.images.SetFakeImages([]string{"busybox", "busybox:new"})
			w := newPodWorker(pod.UID)
			f.sync(t, w, pod)
			f.sync(t, w, pod)
			if n := len(f.containers("app")); n != 1 {
				t.Fatalf("%d instances before the change", n)
			}
			changed := pod.DeepCopy()
			changed.Spec.Containers[0].Image = "busybox:new"
			f.sync(t, w, changed)
			var running []*critesting.FakeContainer
			for _, c := range f.containers("app") {
				if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
					running = append(running, c)
				}
			}
			if len(running) != 1 || running[0].Annotations[podconfig.AnnotationContainerImage] != "busybox:new" {
				t.Fatalf("running instances %d, want one of busybox:new", len(running))
			}
			cs := f.apiPod(t, "img").Status.ContainerStatuses[0]
			if cs.RestartCount != 1 || cs.Image != "busybox:new" {
				t.Errorf("status restartCount %d image %q", cs.RestartCount, cs.Image)
			}
		})
	}
}

// TestFailingInitContainer: a failing init container keeps the app
// containers from starting; under Never it fails the pod, otherwise it is
// restarted. Initialized names the init containers not done.
func TestFailingInitContainer(t *testing.T) {
	tests := []struct {
		policy      corev1.RestartPolicy
		wantPhase   corev1.PodPhase
		wantInits   int // instances of init1 after its failure
		wantMessage string
	}{
		{corev1.RestartPolicyNever, corev1.PodFailed, 1, "containers with incomplete status: [init1 init2]"},
		{corev1.RestartPolicyOnFailure, corev1.PodPending, 2, "containers with incomplete status: [init1 init2]"},
		{corev1.RestartPolicyAlways, corev1.PodPending, 2, "containers with incomplete status: [init1 init2]"},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			pod := testPod("initfail")
			pod.Spec.RestartPolicy = tt.policy
			pod.Spec.InitContainers = []corev1.Container{{Name: "init1", Image: "busybox"}, {Name: "init2", Image: "busybox"}}
			f := newFixture(t, pod)
			w := newPodWorker(pod.UID)
			f.sync(t, w, pod)
			f.exit(f.containers("init1")[0], 1)
			f.sync(t, w, pod)
			if n := len(f.containers("init1")); n != tt.wantInits {
				t.Errorf("%d init1 instances, want %d", n, tt.wantInits)
			}
			if n := len(f.containers("init2")) + len(f.containers("app")); n != 0 {
				t.Errorf("%d later containers started after init1 failed", n)
			}
			st := f.apiPod(t, "initfail").Status
			if st.Phase != tt.wantPhase {
				t.Errorf("phase %s, want %s", st.Phase, tt.wantPhase)
			}
			for _, c := range st.Conditions {
				if c.Type == corev1.PodInitialized && (c.Status != corev1.ConditionFalse || c.Reason != "ContainersNotInitialized" || c.Message != tt.wantMessage) {
					t.Errorf("Initialized %s %q %q", c.Status, c.Reason, c.Message)
				}
			}
			if w := st.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "PodInitializing" {
				t.Errorf("app container %+v, want waiting PodInitializing", st.ContainerStatuses[0].State)
			}
		})
	}
}

// TestObservedGenerationFollowsSpec: each sync writes the generation of
// the spec it acted on, in the status and in the kubelet's conditions.
func TestObservedGenerationFollowsSpec(t *testing.T) {
	pod := testPod("gen")
	pod.Generation = 1
	f := newFixture(t, pod)
	w := newPodWorker(pod.UID)
	for _, gen := range []int64{1, 2, 7} {
		p := pod.DeepCopy()
		p.Generation = gen
		p.Spec.ActiveDeadlineSeconds = ptr.To(5000 - gen)
		f.sync(t, w, p)
		st := f.apiPod(t, "gen").Status
		if st.ObservedGeneration != gen {
			t.Errorf("observedGeneration %d, want %d", st.ObservedGeneration, gen)
		}
		for _, c := range st.Conditions {
			if c.ObservedGeneration != gen {
				t.Errorf("generation %d: %s observedGeneration %d", gen, c.Type, c.ObservedGeneration)
			}
		}
	}
}

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		failures int
		want     time.Duration
	}{
		{1, 250 * time.Millisecond},
		{2, 500 * time.Millisecond},
		{3, time.Second},
		{4, 2 * time.Second},
		{40, 2 * time.Second},
	} {
		if got := retryAfter(tc.failures); got != tc.want {
			t.Errorf("retryAfter(%d) = %v, want %v", tc.failures, got, tc.want)
		}
	}
}
