package kubelet_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestKubectlPortForward(t *testing.T) {
	pod := boundPod("forwarded", httpdContainer())
	pod.Spec.InitContainers = []corev1.Container{{
		Name: "content", Image: suite.busybox,
		Command:      []string{"sh", "-c", "echo forwarded-ok > /www/index.html"},
		VolumeMounts: []corev1.VolumeMount{{Name: "www", MountPath: "/www"}},
	}}
	pod.Spec.Volumes = []corev1.Volume{{Name: "www", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	createPod(t, pod)
	waitPod(t, "forwarded", 60*time.Second, "Running and Ready", isReady)
	pf := suite.srv.KubectlCmd("port-forward", "pod/forwarded", ":8080").Start(t)
	defer pf.Stop()
	re := regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> 8080`)
	line, err := pf.WaitForLine(20*time.Second, re.MatchString)
	if err != nil {
		t.Fatalf("port-forward never listened: %v\n%s\n%s", err, pf.Output(), pf.Stop())
	}
	port := re.FindStringSubmatch(line)[1]
	resp, err := http.Get("http://127.0.0.1:" + port + "/index.html")
	if err != nil {
		t.Fatalf("GET through port-forward: %v\n%s", err, pf.Stop())
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.TrimSpace(string(body)) != "forwarded-ok" {
		t.Errorf("body %q", body)
	}
}

func TestReadinessProbeFlipsReady(t *testing.T) {
	c := corev1.Container{
		Name:    "app",
		Image:   suite.busybox,
		Command: []string{"sh", "-c", "sleep 3600"},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", "/tmp/ready"}}},
			PeriodSeconds: 1,
		},
	}
	createPod(t, boundPod("readiness", c))
	p := waitPod(t, "readiness", 60*time.Second, "Running", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
	})
	if isReady(p) {
		t.Fatal("Ready before the readiness probe passed")
	}
	if r := suite.srv.Kubectl(t, "exec", "readiness", "--", "touch", "/tmp/ready"); r.ExitCode != 0 {
		t.Fatalf("kubectl exec: %s", r)
	}
	waitPod(t, "readiness", 20*time.Second, "Ready", isReady)
	if r := suite.srv.Kubectl(t, "exec", "readiness", "--", "rm", "/tmp/ready"); r.ExitCode != 0 {
		t.Fatalf("kubectl exec: %s", r)
	}
	waitPod(t, "readiness", 20*time.Second, "not Ready again", func(p *corev1.Pod) bool { return !isReady(p) && p.Status.Phase == corev1.PodRunning })
}

func TestEnvAndVolumes(t *testing.T) {
	ctx := context.Background()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "env-secret", Namespace: "default"}, StringData: map[string]string{"password": "s3cret"}}
	if _, err := suite.client.CoreV1().Secrets("default").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = suite.client.CoreV1().Secrets("default").Delete(context.Background(), secret.Name, metav1.DeleteOptions{})
	})
	script := `echo "USER=$APP_USER PW=$PW NODE=$NODE IP=$POD_IP MEM=$MEM_MI ARG=$1"
cat /secret/password; echo
cat /info/labels; echo
cat /var/run/secrets/kubernetes.io/serviceaccount/namespace; echo
test -s /var/run/secrets/kubernetes.io/serviceaccount/token && echo token-present
grep -q "BEGIN CERTIFICATE" /var/run/secrets/kubernetes.io/serviceaccount/ca.crt && echo ca-present
sleep 3600`
	pod := boundPod("envvol", corev1.Container{
		Name:    "app",
		Image:   suite.busybox,
		Command: []string{"sh", "-c", script, "sh"},
		Args:    []string{"$(APP_USER)-arg"},
		Env: []corev1.EnvVar{
			{Name: "APP_USER", Value: "alice"},
			{Name: "PW", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "env-secret"}, Key: "password"}}},
			{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
			{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
			{Name: "MEM_MI", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resourceMi()}}},
		},
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resourceQ("64Mi")}},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "secret", MountPath: "/secret", ReadOnly: true},
			{Name: "info", MountPath: "/info"},
		},
	})
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "env-secret"}}},
		{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}},
	}
	createPod(t, pod)
	p := waitPod(t, "envvol", 60*time.Second, "Running and Ready", isReady)
	want := []string{
		fmt.Sprintf("USER=alice PW=s3cret NODE=%s IP=%s MEM=64 ARG=alice-arg", suite.nodeName, p.Status.PodIP),
		"s3cret", `app="envvol"`, "default", "token-present", "ca-present",
	}
	var out string
	err := waitFor(ctx, 10*time.Second, func() (bool, error) {
		r := suite.srv.Kubectl(t, "logs", "envvol")
		out = r.Stdout
		return strings.Count(out, "\n") >= len(want), nil
	})
	if err != nil {
		t.Fatalf("logs incomplete: %q", out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

func TestKubeletRestartRestartsNoContainer(t *testing.T) {
	createPod(t, boundPod("survivor", corev1.Container{Name: "app", Image: suite.busybox, Command: []string{"sleep", "3600"}}))
	before := waitPod(t, "survivor", 60*time.Second, "Running and Ready", isReady)
	id := before.Status.ContainerStatuses[0].ContainerID
	if err := stopKubelet(); err != nil {
		t.Fatal(err)
	}
	if err := startKubelet(); err != nil {
		t.Fatal(err)
	}
	// Give the new kubelet time to sync every pod more than once.
	time.Sleep(4 * time.Second)
	after := waitPod(t, "survivor", 30*time.Second, "Ready after the kubelet restarted", isReady)
	cs := after.Status.ContainerStatuses[0]
	if cs.ContainerID != id || cs.RestartCount != 0 {
		t.Errorf("container %s restarts %d, want %s and 0", cs.ContainerID, cs.RestartCount, id)
	}
	if !after.Status.StartTime.Equal(before.Status.StartTime) {
		t.Errorf("startTime changed across the restart: %v -> %v", before.Status.StartTime, after.Status.StartTime)
	}
}

func TestStaticPodGetsMirrorPod(t *testing.T) {
	ctx := context.Background()
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: static-web
  namespace: default
spec:
  containers:
  - name: app
    image: %s
    command: ["sleep", "3600"]
`, suite.busybox)
	path := filepath.Join(suite.dir, "manifests", "static-web.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(suite.dir, "manifests", "broken.yaml"), []byte("kind: Pod\nspec: ["), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.Remove(path)
		os.Remove(filepath.Join(suite.dir, "manifests", "broken.yaml"))
	})
	name := "static-web-" + suite.nodeName
	p := waitPod(t, name, 60*time.Second, "mirrored and Running", isReady)
	if p.Annotations["kubernetes.io/config.mirror"] == "" || p.OwnerReferences[0].Kind != "Node" {
		t.Errorf("mirror pod metadata: %+v", p.ObjectMeta)
	}
	os.Remove(path)
	err := waitFor(ctx, 60*time.Second, func() (bool, error) {
		_, err := suite.client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("mirror pod not removed with its manifest: %v", err)
	}
	if suite.kubelet.ExitError() != nil {
		t.Errorf("kubelet died: %v", suite.kubelet.ExitError())
	}
	_ = ptr.To(1)
}
