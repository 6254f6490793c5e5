package kubelet_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"trireme.dev/componentbase/testpki"
)

// runToCompletion creates pod (restartPolicy Never), waits for it to
// succeed and returns its first container's log.
func runToCompletion(t *testing.T, pod *corev1.Pod) string {
	t.Helper()
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	createPod(t, pod)
	waitPod(t, pod.Name, 90*time.Second, "Succeeded", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	b, err := suite.client.CoreV1().Pods("default").GetLogs(pod.Name, &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		t.Fatalf("logs of %s: %v", pod.Name, err)
	}
	return string(b)
}

// waitingReason is the waiting reason and message of the pod's container.
func waitingReason(p *corev1.Pod, container string) (string, string) {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == container && cs.State.Waiting != nil {
			return cs.State.Waiting.Reason, cs.State.Waiting.Message
		}
	}
	return "", ""
}

// TestDownwardAPIDefaultLimits: a container without limits reads the
// node's allocatable cpu and memory as its limits, from its environment,
// a downwardAPI volume and a projected one, as upstream's kubelet gives
// them.
func TestDownwardAPIDefaultLimits(t *testing.T) {
	node, err := suite.client.CoreV1().Nodes().Get(context.Background(), suite.nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cpu, mem := node.Status.Allocatable[corev1.ResourceCPU], node.Status.Allocatable[corev1.ResourceMemory]
	if cpu.IsZero() || mem.IsZero() {
		t.Fatalf("node allocatable %v", node.Status.Allocatable)
	}
	ref := func(res string, divisor resource.Quantity) *corev1.ResourceFieldSelector {
		return &corev1.ResourceFieldSelector{ContainerName: "app", Resource: res, Divisor: divisor}
	}
	items := []corev1.DownwardAPIVolumeFile{
		{Path: "cpu_limit", ResourceFieldRef: ref("limits.cpu", resource.MustParse("1m"))},
		{Path: "memory_limit", ResourceFieldRef: ref("limits.memory", resource.MustParse("1"))},
	}
	pod := boundPod("dapi-defaults", corev1.Container{
		Name:  "app",
		Image: suite.busybox,
		Command: []string{"sh", "-c", `echo "env CPU_LIMIT=$CPU_LIMIT MEMORY_LIMIT=$MEMORY_LIMIT"
echo "volume $(cat /dapi/cpu_limit) $(cat /dapi/memory_limit)"
echo "projected $(cat /projected/cpu_limit) $(cat /projected/memory_limit)"`},
		Env: []corev1.EnvVar{
			{Name: "CPU_LIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}},
			{Name: "MEMORY_LIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory"}}},
		},
		VolumeMounts: []corev1.VolumeMount{{Name: "dapi", MountPath: "/dapi"}, {Name: "projected", MountPath: "/projected"}},
	})
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "dapi", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: items}}},
		{Name: "projected", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: items}},
		}}}},
	}
	out := runToCompletion(t, pod)
	for _, want := range []string{
		fmt.Sprintf("env CPU_LIMIT=%d MEMORY_LIMIT=%d", (cpu.MilliValue()+999)/1000, mem.Value()),
		fmt.Sprintf("volume %d %d", cpu.MilliValue(), mem.Value()),
		fmt.Sprintf("projected %d %d", cpu.MilliValue(), mem.Value()),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// subPathPod mounts one emptyDir twice: whole at /volume_mount, and at
// /subpath_mount the sub path expr, from a variable of the pod's
// annotation mysubpath and the variable POD_NAME.
func subPathPod(name, podName, expr string) *corev1.Pod {
	pod := boundPod(name, corev1.Container{
		Name:    "app",
		Image:   suite.busybox,
		Command: []string{"sh", "-c", "sleep 3600"},
		Env: []corev1.EnvVar{
			{Name: "POD_NAME", Value: podName},
			{Name: "ANNOTATION", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['mysubpath']"}}},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "work", MountPath: "/subpath_mount", SubPathExpr: expr},
			{Name: "work", MountPath: "/volume_mount"},
		},
	})
	pod.Spec.Volumes = []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	return pod
}

// TestSubPathExpr: subPathExpr is expanded from the container's
// variables (the downward API's too) and is writable; an expression
// naming an empty variable, or expanding to an absolute path or "..",
// keeps the container waiting with CreateContainerConfigError and
// upstream's message, and fixing the annotation starts it.
func TestSubPathExpr(t *testing.T) {
	ctx := context.Background()
	t.Run("writes through the sub path", func(t *testing.T) {
		pod := subPathPod("subpath-write", "foo", "$(ANNOTATION)/$(POD_NAME)")
		pod.Annotations = map[string]string{"mysubpath": "mypath"}
		createPod(t, pod)
		waitPod(t, pod.Name, 60*time.Second, "Running and Ready", isReady)
		r := suite.srv.Kubectl(t, "exec", pod.Name, "--", "sh", "-c", "touch /volume_mount/mypath/foo/test.log && test -f /subpath_mount/test.log && echo seen")
		if !strings.Contains(r.Stdout, "seen") {
			t.Fatalf("file written in the volume not seen through the sub path: %+v", r)
		}
	})
	for _, tc := range []struct{ name, podName, want string }{
		{"absolute path", "/tmp", "error SubPath `/tmp` must not be an absolute path"},
		{"step up", "..", "unable to provision SubPath `..`: must not contain '..'"},
	} {
		t.Run("refuses "+tc.name, func(t *testing.T) {
			name := "subpath-" + strings.ReplaceAll(tc.name, " ", "-")
			pod := subPathPod(name, tc.podName, "$(POD_NAME)")
			createPod(t, pod)
			p := waitPod(t, name, 60*time.Second, "CreateContainerConfigError", func(p *corev1.Pod) bool {
				reason, _ := waitingReason(p, "app")
				return reason == "CreateContainerConfigError"
			})
			if _, msg := waitingReason(p, "app"); !strings.Contains(msg, tc.want) {
				t.Errorf("waiting message %q, want %q", msg, tc.want)
			}
			if p.Status.Phase != corev1.PodPending {
				t.Errorf("phase %s, want Pending", p.Status.Phase)
			}
		})
	}
	t.Run("starts once the annotation is set", func(t *testing.T) {
		pod := subPathPod("subpath-later", "foo", "$(ANNOTATION)/$(POD_NAME)")
		pod.Annotations = map[string]string{"notmysubpath": "mypath"}
		createPod(t, pod)
		p := waitPod(t, pod.Name, 60*time.Second, "CreateContainerConfigError", func(p *corev1.Pod) bool {
			reason, _ := waitingReason(p, "app")
			return reason == "CreateContainerConfigError"
		})
		if _, msg := waitingReason(p, "app"); msg != "missing value for ANNOTATION" {
			t.Errorf("waiting message %q, want upstream's %q", msg, "missing value for ANNOTATION")
		}
		patch := `{"metadata":{"annotations":{"mysubpath":"mypath"}}}`
		if _, err := suite.client.CoreV1().Pods("default").Patch(ctx, pod.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		waitPod(t, pod.Name, 60*time.Second, "Running and Ready after the fix", isReady)
	})
}

// TestSecretVolumeFSGroupNonRoot: a secret with defaultMode 0440 is
// readable by a non-root user through the pod's fsGroup, which owns it.
func TestSecretVolumeFSGroupNonRoot(t *testing.T) {
	ctx := context.Background()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "fsgroup-secret", Namespace: "default"}, StringData: map[string]string{"data-1": "value-1"}}
	if _, err := suite.client.CoreV1().Secrets("default").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = suite.client.CoreV1().Secrets("default").Delete(context.Background(), secret.Name, metav1.DeleteOptions{})
	})
	script := `for f in /etc/secret-volume/data-1 /etc/projected/data-1 /etc/projected/token; do
echo "$f $(stat -L -c '%a %u %g' $f) $(head -c 7 $f)"; done`
	pod := boundPod("fsgroup-secret", corev1.Container{
		Name: "app", Image: suite.busybox, Command: []string{"sh", "-c", script},
		VolumeMounts: []corev1.VolumeMount{{Name: "secret", MountPath: "/etc/secret-volume"}, {Name: "projected", MountPath: "/etc/projected"}},
	})
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr.To[int64](1001), RunAsUser: ptr.To[int64](1000)}
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret.Name, DefaultMode: ptr.To[int32](0o440)}}},
		{Name: "projected", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](0o440), Sources: []corev1.VolumeProjection{
			{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: secret.Name}}},
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
		}}}},
	}
	out := runToCompletion(t, pod)
	for _, want := range []string{
		"/etc/secret-volume/data-1 440 0 1001 value-1",
		"/etc/projected/data-1 440 0 1001 value-1",
		// A token is its user's alone: mode 0600 plus the group's read.
		"/etc/projected/token 640 1000 1001 eyJhbGc",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestClusterTrustBundleSources: bundles by signer and label selector,
// optional sources that find nothing (an empty file), and a required one
// that finds nothing, which keeps the pod from starting.
func TestClusterTrustBundleSources(t *testing.T) {
	ctx := context.Background()
	signer := "e2e.trireme.dev/" + suite.nodeName
	var pems []string
	for i, alive := range []string{"true", "true", "false"} {
		pem := testCACertPEM(t, fmt.Sprintf("ctb-%d", i))
		pems = append(pems, pem)
		b := &certificatesv1.ClusterTrustBundle{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s:%d", strings.Replace(signer, "/", ":", 1), i), Labels: map[string]string{"alive": alive}},
			Spec:       certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: pem},
		}
		if _, err := suite.client.CertificatesV1().ClusterTrustBundles().Create(ctx, b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = suite.client.CertificatesV1().ClusterTrustBundles().Delete(context.Background(), b.Name, metav1.DeleteOptions{})
		})
	}
	source := func(path string, sel *metav1.LabelSelector, optional bool) corev1.VolumeProjection {
		return corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{SignerName: ptr.To(signer), LabelSelector: sel, Path: path, Optional: ptr.To(optional)}}
	}
	pod := boundPod("ctb-sources", corev1.Container{
		Name: "app", Image: suite.busybox,
		Command:      []string{"sh", "-c", "for f in alive all nil none missing; do echo \"== $f\"; cat /ctb/$f.pem; done"},
		VolumeMounts: []corev1.VolumeMount{{Name: "ctb", MountPath: "/ctb"}},
	})
	pod.Spec.Volumes = []corev1.Volume{{Name: "ctb", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
		source("alive.pem", &metav1.LabelSelector{MatchLabels: map[string]string{"alive": "true"}}, false),
		source("all.pem", &metav1.LabelSelector{}, false),
		source("nil.pem", nil, true),
		source("none.pem", &metav1.LabelSelector{MatchLabels: map[string]string{"alive": "unknown"}}, true),
		{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: ptr.To("does-not-exist"), Path: "missing.pem", Optional: ptr.To(true)}},
	}}}}}
	out := runToCompletion(t, pod)
	sections := map[string]string{}
	for _, s := range strings.Split(out, "== ")[1:] {
		name, body, _ := strings.Cut(s, "\n")
		sections[name] = body
	}
	for name, want := range map[string][]string{"alive": pems[:2], "all": pems, "nil": nil, "none": nil, "missing": nil} {
		got := sections[name]
		if strings.Count(got, "BEGIN CERTIFICATE") != len(want) {
			t.Errorf("%s.pem holds %d certificates, want %d:\n%s", name, strings.Count(got, "BEGIN CERTIFICATE"), len(want), got)
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s.pem lacks a bundle's certificate", name)
			}
		}
	}

	t.Run("required and absent keeps the pod from starting", func(t *testing.T) {
		pod := boundPod("ctb-required", corev1.Container{Name: "app", Image: suite.busybox, Command: []string{"sleep", "3600"}, VolumeMounts: []corev1.VolumeMount{{Name: "ctb", MountPath: "/ctb"}}})
		pod.Spec.Volumes = []corev1.Volume{{Name: "ctb", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			source("none.pem", &metav1.LabelSelector{MatchLabels: map[string]string{"alive": "unknown"}}, false),
		}}}}}
		createPod(t, pod)
		time.Sleep(8 * time.Second)
		p, err := suite.client.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status.Phase != corev1.PodPending {
			t.Errorf("phase %s, want Pending", p.Status.Phase)
		}
		events, err := suite.client.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=ctb-required,reason=FailedMount"})
		if err != nil || len(events.Items) == 0 {
			t.Errorf("no FailedMount event (%v)", err)
		} else if msg := events.Items[0].Message; !strings.Contains(msg, "matched zero ClusterTrustBundles") {
			t.Errorf("FailedMount event %q", msg)
		}
	})
}

// testCACertPEM is a new self-signed CA certificate, in PEM.
func testCACertPEM(t *testing.T, cn string) string {
	t.Helper()
	return string(testpki.NewCA(cn).CertPEM)
}
