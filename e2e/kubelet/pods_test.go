package kubelet_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"
)

func boundPod(name string, containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			NodeName:                      suite.nodeName,
			Containers:                    containers,
			TerminationGracePeriodSeconds: ptr.To[int64](5),
		},
	}
}

func createPod(t testing.TB, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	out, err := suite.client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s: %v", pod.Name, err)
	}
	t.Cleanup(func() {
		err := suite.client.CoreV1().Pods(pod.Namespace).Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete pod %s: %v", pod.Name, err)
		}
	})
	return out
}

// waitPod polls the pod until cond holds.
func waitPod(t testing.TB, name string, timeout time.Duration, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	err := waitFor(context.Background(), timeout, func() (bool, error) {
		p, err := suite.client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = p
		return cond(p), nil
	})
	if err != nil {
		t.Fatalf("pod %s never %s: %v\nstatus: %s", name, what, err, dump(last.Status))
	}
	return last
}

func isReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// httpdContainer serves /www on port 8080 with busybox httpd.
func httpdContainer() corev1.Container {
	return corev1.Container{
		Name:         "web",
		Image:        suite.busybox,
		Command:      []string{"httpd", "-f", "-p", "8080", "-h", "/www"},
		Ports:        []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		VolumeMounts: []corev1.VolumeMount{{Name: "www", MountPath: "/www"}},
	}
}

func TestPodRunsWithIPAndServesHTTP(t *testing.T) {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config", Namespace: "default"}, Data: map[string]string{"greeting": "hello-from-configmap"}}
	if _, err := suite.client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = suite.client.CoreV1().ConfigMaps("default").Delete(context.Background(), cm.Name, metav1.DeleteOptions{})
	})
	web := httpdContainer()
	web.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstrName("http")}}, PeriodSeconds: 1}
	pod := boundPod("web", web)
	pod.Spec.InitContainers = []corev1.Container{{
		Name:    "content",
		Image:   suite.busybox,
		Command: []string{"sh", "-c", `echo "$GREETING $POD_NAME $(cat /config/greeting)" > /www/index.html`},
		Env: []corev1.EnvVar{
			{Name: "GREETING", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}, Key: "greeting"}}},
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		},
		VolumeMounts: []corev1.VolumeMount{{Name: "www", MountPath: "/www"}, {Name: "config", MountPath: "/config"}},
	}}
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "www", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}},
	}
	createPod(t, pod)
	p := waitPod(t, "web", 60*time.Second, "Running and Ready", isReady)
	if p.Status.PodIP == "" || p.Status.HostIP != "127.0.0.1" {
		t.Fatalf("podIP %q hostIP %q", p.Status.PodIP, p.Status.HostIP)
	}
	for _, c := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodScheduled} {
		if !hasTrueCondition(p, c) {
			t.Errorf("condition %s not True: %s", c, dump(p.Status.Conditions))
		}
	}
	if cs := p.Status.ContainerStatuses; len(cs) != 1 || !cs[0].Ready || cs[0].State.Running == nil || !strings.HasPrefix(cs[0].ContainerID, "containerd://") || cs[0].ImageID == "" {
		t.Errorf("container status: %s", dump(cs))
	}
	if cs := p.Status.InitContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 0 {
		t.Errorf("init container status: %s", dump(cs))
	}
	resp, err := http.Get("http://" + p.Status.PodIP + ":8080/index.html")
	if err != nil {
		t.Fatalf("GET pod IP: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got, want := strings.TrimSpace(string(body)), "hello-from-configmap web hello-from-configmap"; got != want {
		t.Errorf("body %q, want %q", got, want)
	}
	t.Run("kubectl logs", func(t *testing.T) {
		r := suite.srv.Kubectl(t, "logs", "web", "-c", "content")
		if r.ExitCode != 0 {
			t.Fatalf("kubectl logs: %s", r)
		}
		r = suite.srv.Kubectl(t, "exec", "web", "-c", "web", "--", "sh", "-c", "echo out; echo err >&2; cat /etc/hostname")
		if r.ExitCode != 0 || !strings.Contains(r.Stdout, "out\n") || !strings.Contains(r.Stdout, "web") || !strings.Contains(r.Stderr, "err") {
			t.Fatalf("kubectl exec: %s", r)
		}
	})
}

func TestKubectlLogs(t *testing.T) {
	pod := boundPod("logger", corev1.Container{
		Name:    "logger",
		Image:   suite.busybox,
		Command: []string{"sh", "-c", "echo line-one; echo line-two; sleep 3600"},
	})
	createPod(t, pod)
	waitPod(t, "logger", 60*time.Second, "Running", isReady)
	var r interface{ String() string }
	err := waitFor(context.Background(), 10*time.Second, func() (bool, error) {
		res := suite.srv.Kubectl(t, "logs", "logger")
		r = res
		return res.ExitCode == 0 && res.Stdout == "line-one\nline-two\n", nil
	})
	if err != nil {
		t.Fatalf("kubectl logs: %v\n%s", err, r)
	}
	res := suite.srv.Kubectl(t, "logs", "logger", "--tail=1")
	if res.Stdout != "line-two\n" {
		t.Errorf("kubectl logs --tail=1: %s", res)
	}
}

func TestKubectlLogsFollow(t *testing.T) {
	createPod(t, boundPod("ticker", corev1.Container{
		Name:    "ticker",
		Image:   suite.busybox,
		Command: []string{"sh", "-c", "i=0; while true; do echo tick-$i; i=$((i+1)); sleep 0.3; done"},
	}))
	waitPod(t, "ticker", 60*time.Second, "Running", isReady)
	follow := suite.srv.KubectlCmd("logs", "-f", "ticker").Start(t)
	defer follow.Stop()
	// A line written after kubectl started proves the stream follows.
	if _, err := follow.WaitForLine(20*time.Second, func(l string) bool { return l == "tick-15" }); err != nil {
		t.Fatalf("kubectl logs -f: %v\n%s\n%s", err, follow.Output(), follow.Stop())
	}
}

func TestKubectlCp(t *testing.T) {
	createPod(t, boundPod("files", corev1.Container{Name: "app", Image: suite.busybox, Command: []string{"sleep", "3600"}}))
	waitPod(t, "files", 60*time.Second, "Running", isReady)
	dir := t.TempDir()
	src := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(src, []byte("round trip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := suite.srv.Kubectl(t, "cp", src, "default/files:/tmp/copied.txt"); r.ExitCode != 0 {
		t.Fatalf("kubectl cp to the pod: %s", r)
	}
	back := filepath.Join(dir, "back.txt")
	if r := suite.srv.Kubectl(t, "cp", "default/files:/tmp/copied.txt", back); r.ExitCode != 0 {
		t.Fatalf("kubectl cp from the pod: %s", r)
	}
	if b, err := os.ReadFile(back); err != nil || string(b) != "round trip\n" {
		t.Errorf("round trip gave %q, %v", b, err)
	}
}

func TestLivenessProbeFailureRestartsContainer(t *testing.T) {
	pod := boundPod("liveness", corev1.Container{
		Name:    "app",
		Image:   suite.busybox,
		Command: []string{"sh", "-c", "touch /tmp/healthy; sleep 2; rm /tmp/healthy; sleep 3600"},
		LivenessProbe: &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/healthy"}}},
			PeriodSeconds:    1,
			FailureThreshold: 1,
		},
	})
	pod.Spec.TerminationGracePeriodSeconds = ptr.To[int64](1)
	createPod(t, pod)
	p := waitPod(t, "liveness", 60*time.Second, "restarted after its liveness probe failed", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount >= 1 && cs[0].LastTerminationState.Terminated != nil
	})
	if p.Status.Phase != corev1.PodRunning {
		t.Errorf("phase %s after restart", p.Status.Phase)
	}
}

func TestCrashingContainerBacksOff(t *testing.T) {
	pod := boundPod("crasher", corev1.Container{Name: "app", Image: suite.busybox, Command: []string{"sh", "-c", "echo dying; exit 3"}})
	createPod(t, pod)
	p := waitPod(t, "crasher", 60*time.Second, "in CrashLoopBackOff", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == "CrashLoopBackOff"
	})
	last := p.Status.ContainerStatuses[0].LastTerminationState.Terminated
	if last == nil || last.ExitCode != 3 {
		t.Errorf("last state: %s", dump(p.Status.ContainerStatuses[0]))
	}
	if r := suite.srv.Kubectl(t, "logs", "crasher", "--previous"); r.ExitCode != 0 || r.Stdout != "dying\n" {
		t.Errorf("kubectl logs --previous: %s", r)
	}
}

func TestImageThatDoesNotExist(t *testing.T) {
	pod := boundPod("noimage", corev1.Container{Name: "app", Image: "trireme.dev/does-not-exist:v0"})
	createPod(t, pod)
	waitPod(t, "noimage", 60*time.Second, "in ErrImagePull or ImagePullBackOff", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		if len(cs) != 1 || cs[0].State.Waiting == nil {
			return false
		}
		r := cs[0].State.Waiting
		return (r.Reason == "ErrImagePull" || r.Reason == "ImagePullBackOff") && strings.Contains(r.Message, "does-not-exist")
	})
}

func TestDeleteRunsPreStopAndStopsContainers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	pod := boundPod("graceful", corev1.Container{
		Name:    "app",
		Image:   suite.busybox,
		Command: []string{"sh", "-c", "trap 'echo term > /host/term; exit 0' TERM; while true; do sleep 0.2; done"},
		Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
			Command: []string{"sh", "-c", "echo prestop > /host/prestop"},
		}}},
		VolumeMounts: []corev1.VolumeMount{{Name: "host", MountPath: "/host"}},
	})
	pod.Spec.Volumes = []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir}}}}
	created := createPod(t, pod)
	waitPod(t, "graceful", 60*time.Second, "Running", isReady)
	if err := suite.client.CoreV1().Pods("default").Delete(ctx, "graceful", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := waitFor(ctx, 30*time.Second, func() (bool, error) {
		_, err := suite.client.CoreV1().Pods("default").Get(ctx, "graceful", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("pod never went away: %v", err)
	}
	for _, f := range []string{"prestop", "term"} {
		if b, err := readFile(dir, f); err != nil || !strings.Contains(b, f) {
			t.Errorf("%s not recorded: %q %v", f, b, err)
		}
	}
	rs, err := suite.containerd.RuntimeService(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close(ctx)
	containers, err := rs.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: map[string]string{"io.kubernetes.pod.uid": string(created.UID)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range containers {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			t.Errorf("container %s still running after the pod was deleted", c.Id)
		}
	}
}

func hasTrueCondition(p *corev1.Pod, t corev1.PodConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

var _ = fmt.Sprint
var _ = types.UID("")

func TestKubectlAttach(t *testing.T) {
	createPod(t, boundPod("attached", corev1.Container{
		Name:    "app",
		Image:   suite.busybox,
		Command: []string{"sh", "-c", "while read line; do echo got-$line; done; echo stdin-closed; sleep 3600"},
		Stdin:   true,
	}))
	waitPod(t, "attached", 60*time.Second, "Running", isReady)
	cmd := suite.srv.KubectlCmd("attach", "-i", "attached")
	cmd.Stdin = "hello\n"
	cmd.Timeout = 20 * time.Second
	if r := cmd.Run(t); r.ExitCode != 0 {
		t.Fatalf("kubectl attach: %s", r)
	}
	// kubectl ends the session when its stdin ends, possibly before the
	// reply comes back; the container's log shows what reached it.
	var out string
	err := waitFor(context.Background(), 10*time.Second, func() (bool, error) {
		out = suite.srv.Kubectl(t, "logs", "attached").Stdout
		return strings.Contains(out, "got-hello"), nil
	})
	if err != nil {
		t.Fatalf("stdin sent through kubectl attach never reached the container: %q", out)
	}
}
