package kubelet_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// These tests hold the kubelet to what upstream's node conformance specs
// read of it, against real containers: init container statuses and the
// pod's conditions, termination messages, ephemeral containers,
// admission on host ports, observedGeneration and envFrom.

func condition(p *corev1.Pod, t corev1.PodConditionType) corev1.PodCondition {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return corev1.PodCondition{}
}

func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// TestInitContainers: init containers are Ready once they succeeded; a
// failing one fails a RestartPolicy=Never pod, its app containers never
// start, and Initialized names the incomplete ones, as upstream words it.
func TestInitContainers(t *testing.T) {
	tests := []struct {
		name        string
		init2       string
		wantPhase   corev1.PodPhase
		wantReady   []bool
		wantInit    corev1.ConditionStatus
		wantMessage string
	}{
		{name: "succeed", init2: "/bin/true", wantPhase: corev1.PodSucceeded, wantReady: []bool{true, true}, wantInit: corev1.ConditionTrue},
		{name: "fail", init2: "/bin/false", wantPhase: corev1.PodFailed, wantReady: []bool{true, false}, wantInit: corev1.ConditionFalse,
			wantMessage: "containers with incomplete status: [init2]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "init-" + tt.name
			pod := boundPod(name, corev1.Container{Name: "run1", Image: suite.busybox, Command: []string{"/bin/true"}})
			pod.Spec.RestartPolicy = corev1.RestartPolicyNever
			pod.Spec.InitContainers = []corev1.Container{
				{Name: "init1", Image: suite.busybox, Command: []string{"/bin/true"}},
				{Name: "init2", Image: suite.busybox, Command: []string{tt.init2}},
			}
			createPod(t, pod)
			p := waitPod(t, name, 60*time.Second, "finished", terminal)
			if p.Status.Phase != tt.wantPhase {
				t.Fatalf("phase %s, want %s\n%s", p.Status.Phase, tt.wantPhase, dump(p.Status))
			}
			for i, want := range tt.wantReady {
				if got := p.Status.InitContainerStatuses[i].Ready; got != want {
					t.Errorf("init container %d ready %v, want %v", i, got, want)
				}
			}
			init := condition(p, corev1.PodInitialized)
			if init.Status != tt.wantInit || init.Message != tt.wantMessage {
				t.Errorf("Initialized %s %q %q, want %s %q", init.Status, init.Reason, init.Message, tt.wantInit, tt.wantMessage)
			}
			if tt.wantPhase == corev1.PodFailed {
				if w := p.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "PodInitializing" {
					t.Errorf("app container %+v, want waiting PodInitializing", p.Status.ContainerStatuses[0].State)
				}
				if init.Reason != "ContainersNotInitialized" {
					t.Errorf("Initialized reason %q", init.Reason)
				}
			}
		})
	}
}

// TestTerminationMessages: the message comes from the file a non-root
// user wrote at a path of its own, or from the end of the log of a
// container that failed under FallbackToLogsOnError.
func TestTerminationMessages(t *testing.T) {
	tests := []struct {
		name      string
		container corev1.Container
		wantPhase corev1.PodPhase
		want      string
	}{
		{name: "nonroot", wantPhase: corev1.PodSucceeded, want: "DONE", container: corev1.Container{
			Command: []string{"/bin/sh", "-c"}, Args: []string{"/bin/echo -n DONE > /dev/termination-custom-log"},
			TerminationMessagePath: "/dev/termination-custom-log",
			SecurityContext:        &corev1.SecurityContext{RunAsUser: ptr.To[int64](10000)},
		}},
		{name: "fallback", wantPhase: corev1.PodFailed, want: "DONE", container: corev1.Container{
			Command: []string{"/bin/sh", "-c"}, Args: []string{"/bin/echo -n DONE; /bin/false"},
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		}},
		{name: "fallback-success", wantPhase: corev1.PodSucceeded, want: "", container: corev1.Container{
			Command: []string{"/bin/sh", "-c"}, Args: []string{"/bin/echo -n DONE; /bin/true"},
			TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "termmsg-" + tt.name
			c := tt.container
			c.Name, c.Image = "termination-message-container", suite.busybox
			pod := boundPod(name, c)
			pod.Spec.RestartPolicy = corev1.RestartPolicyNever
			createPod(t, pod)
			p := waitPod(t, name, 60*time.Second, "finished", terminal)
			if p.Status.Phase != tt.wantPhase {
				t.Fatalf("phase %s, want %s\n%s", p.Status.Phase, tt.wantPhase, dump(p.Status))
			}
			term := p.Status.ContainerStatuses[0].State.Terminated
			if term == nil || term.Message != tt.want {
				t.Errorf("terminated %+v, want message %q", term, tt.want)
			}
		})
	}
}

// TestEphemeralContainer: kubectl debug adds an ephemeral container to a
// running pod; it runs in the pod, reports its status, and kubectl exec
// and logs reach it. A second one added through the subresource runs
// beside it.
func TestEphemeralContainer(t *testing.T) {
	ctx := context.Background()
	createPod(t, boundPod("debugged", corev1.Container{Name: "app", Image: suite.busybox, Command: []string{"sleep", "3600"}}))
	waitPod(t, "debugged", 60*time.Second, "Running", isReady)
	r := suite.srv.Kubectl(t, "debug", "debugged", "--image", suite.busybox, "--container", "debugger", "--target", "app",
		"--", "sh", "-c", "while true; do echo polo; sleep 2; done")
	if r.ExitCode != 0 {
		t.Fatalf("kubectl debug: %s", r)
	}
	running := func(name string) func(*corev1.Pod) bool {
		return func(p *corev1.Pod) bool {
			for _, s := range p.Status.EphemeralContainerStatuses {
				if s.Name == name && s.State.Running != nil {
					return true
				}
			}
			return false
		}
	}
	p := waitPod(t, "debugged", 60*time.Second, "running its ephemeral container", running("debugger"))
	if p.Generation != 2 {
		t.Errorf("generation %d, want 2", p.Generation)
	}
	if r := suite.srv.Kubectl(t, "exec", "debugged", "-c", "debugger", "--", "echo", "marco"); r.ExitCode != 0 || !strings.Contains(r.Stdout, "marco") {
		t.Errorf("kubectl exec into the ephemeral container: %s", r)
	}
	// --target shares the app's process namespace: its sleep is seen.
	if r := suite.srv.Kubectl(t, "exec", "debugged", "-c", "debugger", "--", "ps"); !strings.Contains(r.Stdout, "sleep 3600") {
		t.Errorf("the target's processes are not visible: %s", r)
	}
	var logs string
	if err := waitFor(ctx, 20*time.Second, func() (bool, error) {
		logs = suite.srv.Kubectl(t, "logs", "debugged", "-c", "debugger").Stdout
		return strings.Contains(logs, "polo"), nil
	}); err != nil {
		t.Errorf("ephemeral container logs %q: %v", logs, err)
	}

	p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "debugger2", Image: suite.busybox, Command: []string{"sleep", "3600"},
		ImagePullPolicy: corev1.PullIfNotPresent, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}})
	if _, err := suite.client.CoreV1().Pods("default").UpdateEphemeralContainers(ctx, "debugged", p, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update ephemeral containers: %v", err)
	}
	p = waitPod(t, "debugged", 60*time.Second, "running its second ephemeral container", running("debugger2"))
	if len(p.Status.EphemeralContainerStatuses) != 2 || !isReady(p) {
		t.Errorf("statuses %s", dump(p.Status))
	}
}

// TestHostPortAdmission: a pod asking for a host port another pod on the
// node holds is refused (Failed, reason NodePorts, an Event); once the
// holder is gone, a pod asking for it runs.
func TestHostPortAdmission(t *testing.T) {
	ctx := context.Background()
	port := corev1.ContainerPort{Name: "conflict", ContainerPort: 21017, HostPort: 21017}
	holder := boundPod("port-holder", corev1.Container{Name: "app", Image: suite.busybox, Command: []string{"sleep", "3600"}, Ports: []corev1.ContainerPort{port}})
	createPod(t, holder)
	waitPod(t, "port-holder", 60*time.Second, "Running", isReady)

	createPod(t, boundPod("port-taker", corev1.Container{Name: "app", Image: suite.busybox, Command: []string{"sleep", "3600"}, Ports: []corev1.ContainerPort{port}}))
	p := waitPod(t, "port-taker", 30*time.Second, "refused", terminal)
	if p.Status.Phase != corev1.PodFailed || p.Status.Reason != "NodePorts" || !strings.HasPrefix(p.Status.Message, "Pod was rejected: ") {
		t.Errorf("status phase %s reason %q message %q", p.Status.Phase, p.Status.Reason, p.Status.Message)
	}
	sel := fields.Set{"involvedObject.name": "port-taker", "reason": "NodePorts"}.AsSelector().String()
	if err := waitFor(ctx, 20*time.Second, func() (bool, error) {
		events, err := suite.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: sel})
		return err == nil && len(events.Items) > 0, nil
	}); err != nil {
		t.Errorf("no NodePorts event: %v", err)
	}

	if err := suite.client.CoreV1().Pods("default").Delete(ctx, "port-holder", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	createPod(t, boundPod("port-later", corev1.Container{Name: "app", Image: suite.busybox, Command: []string{"sleep", "3600"}, Ports: []corev1.ContainerPort{port}}))
	waitPod(t, "port-later", 60*time.Second, "Running once the port is free", isReady)
}

// TestObservedGeneration: the status and each kubelet condition report
// the generation of the spec the kubelet acted on.
func TestObservedGeneration(t *testing.T) {
	ctx := context.Background()
	pod := boundPod("generation", corev1.Container{Name: "app", Image: suite.busybox, Command: []string{"sleep", "3600"}})
	pod.Spec.ActiveDeadlineSeconds = ptr.To[int64](5000)
	createPod(t, pod)
	waitPod(t, "generation", 60*time.Second, "Running", isReady)
	updates := []func(*corev1.Pod){
		// Replacing the tolerations keeps the defaults admission adds, as
		// the Pod Generation spec's update does.
		func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar", Effect: corev1.TaintEffectNoSchedule}}
		},
	}
	for range 4 {
		updates = append(updates, func(p *corev1.Pod) { *p.Spec.ActiveDeadlineSeconds-- })
	}
	for _, update := range updates {
		// The kubelet writes the status meanwhile: retry on its conflicts.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			p, err := suite.client.CoreV1().Pods("default").Get(ctx, "generation", metav1.GetOptions{})
			if err != nil {
				return err
			}
			update(p)
			_, err = suite.client.CoreV1().Pods("default").Update(ctx, p, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	waitPod(t, "generation", 20*time.Second, "observed generation 6", func(p *corev1.Pod) bool {
		if p.Generation != 6 || p.Status.ObservedGeneration != 6 {
			return false
		}
		for _, c := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			if condition(p, c).ObservedGeneration != 6 {
				return false
			}
		}
		return true
	})
}

// TestEnvFromPrefixes: envFrom takes every key of a ConfigMap and a
// Secret, under each prefix as given, whatever characters the names
// hold. The container runs env itself: a shell may drop variables whose
// names are not its own kind.
func TestEnvFromPrefixes(t *testing.T) {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "envfrom-cm", Namespace: "default"}, Data: map[string]string{"data-1": "value-1", "data-2": "value-2"}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "envfrom-secret", Namespace: "default"}, StringData: map[string]string{"data-3": "value-3"}}
	if _, err := suite.client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := suite.client.CoreV1().Secrets("default").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = suite.client.CoreV1().ConfigMaps("default").Delete(context.Background(), cm.Name, metav1.DeleteOptions{})
		_ = suite.client.CoreV1().Secrets("default").Delete(context.Background(), secret.Name, metav1.DeleteOptions{})
	})
	prefixes := []string{"", "p-", "1-", "$_-", "ABC_", "#@!"}
	var from []corev1.EnvFromSource
	var want []string
	for _, prefix := range prefixes {
		from = append(from,
			corev1.EnvFromSource{Prefix: prefix, ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}},
			corev1.EnvFromSource{Prefix: prefix, SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: secret.Name}}})
		for i := 1; i <= 3; i++ {
			want = append(want, fmt.Sprintf("%sdata-%d=value-%d", prefix, i, i))
		}
	}
	pod := boundPod("envfrom", corev1.Container{Name: "env-test", Image: suite.busybox, Command: []string{"env"}, EnvFrom: from})
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	createPod(t, pod)
	if p := waitPod(t, "envfrom", 60*time.Second, "finished", terminal); p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("phase %s\n%s", p.Status.Phase, dump(p.Status))
	}
	out := suite.srv.Kubectl(t, "logs", "envfrom").Stdout
	lines := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		lines[l] = true
	}
	for _, w := range want {
		if !lines[w] {
			t.Errorf("environment lacks %q:\n%s", w, out)
		}
	}
}
