package apiserver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// appManifest is a Deployment and its Service; replicas, the MODE value and
// the EXTRA variable are what the second apply changes.
func appManifest(replicas, mode string, extraEnv bool) string {
	extra := ""
	if extraEnv {
		extra = "\n        - {name: EXTRA, value: x}"
	}
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels: {app: app}
spec:
  replicas: ` + replicas + `
  selector:
    matchLabels: {app: app}
  template:
    metadata:
      labels: {app: app}
    spec:
      containers:
      - name: main
        image: busybox
        command: [sleep, "3600"]
        ports:
        - {name: http, containerPort: 8080}
        env:
        - {name: MODE, value: ` + mode + `}` + extra + `
---
apiVersion: v1
kind: Service
metadata:
  name: app
spec:
  selector: {app: app}
  ports:
  - {name: http, port: 80, targetPort: http}
`
}

func TestApplyClientSideStrategicMerge(t *testing.T) {
	ns := newNamespace(t, "apply-client")
	wantStdout(t, kubectlStdinOK(t, appManifest("2", "one", true), "-n", ns, "apply", "-f", "-"),
		"deployment.apps/app created\nservice/app created\n")
	if got := jsonpath(t, `{.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`, "-n", ns, "get", "deployment", "app"); !strings.Contains(got, `"replicas":2`) {
		t.Fatalf("last-applied-configuration = %q, want the applied manifest", got)
	}
	clusterIP := jsonpath(t, "{.spec.clusterIP}", "-n", ns, "get", "service", "app")
	// A change made outside the manifest must survive the next apply.
	kubectlOK(t, "-n", ns, "annotate", "deployment", "app", "owner=ops")

	wantStdout(t, kubectlStdinOK(t, appManifest("4", "two", false), "-n", ns, "apply", "-f", "-"),
		"deployment.apps/app configured\nservice/app unchanged\n")
	var d appsv1.Deployment
	getYAML(t, &d, "-n", ns, "get", "deployment", "app")
	c := d.Spec.Template.Spec.Containers[0]
	checks := []struct {
		field     string
		got, want any
	}{
		{"spec.replicas", deref(d.Spec.Replicas), int32(4)},
		{"env (MODE changed, EXTRA removed by the three-way merge)", c.Env, []corev1.EnvVar{{Name: "MODE", Value: "two"}}},
		{"ports kept", len(c.Ports), 1},
		{"annotation owner set by another writer", d.Annotations["owner"], "ops"},
		{"generation", d.Generation, int64(2)},
	}
	for _, ck := range checks {
		if fmtAny(ck.got) != fmtAny(ck.want) {
			t.Errorf("%s = %v, want %v", ck.field, ck.got, ck.want)
		}
	}
	if got := jsonpath(t, "{.spec.clusterIP}", "-n", ns, "get", "service", "app"); got != clusterIP {
		t.Errorf("service clusterIP changed across applies: %s -> %s", clusterIP, got)
	}
	wantStdout(t, kubectlStdinOK(t, appManifest("4", "two", false), "-n", ns, "apply", "-f", "-"),
		"deployment.apps/app unchanged\nservice/app unchanged\n")
}

const ssaConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: ssa
data:
  key: %s
`

func TestApplyServerSideConflict(t *testing.T) {
	ns := newNamespace(t, "apply-server")
	manifest := func(v string) string { return strings.Replace(ssaConfigMap, "%s", v, 1) }
	wantStdout(t, kubectlStdinOK(t, manifest("one"), "-n", ns, "apply", "--server-side", "-f", "-"),
		"configmap/ssa serverside-applied\n")

	res := srv.KubectlStdin(t, manifest("two"), "-n", ns, "apply", "--server-side", "--field-manager=intruder", "-f", "-")
	if res.ExitCode != 1 || !strings.Contains(res.Stderr, `Apply failed with 1 conflict: conflict with "kubectl": .data.key`) {
		t.Fatalf("conflicting apply: want upstream's conflict error, got %s", res)
	}
	if !strings.Contains(res.Stderr, "--force-conflicts") {
		t.Errorf("conflict message lacks kubectl's --force-conflicts advice:\n%s", res.Stderr)
	}
	if got := jsonpath(t, "{.data.key}", "-n", ns, "get", "configmap", "ssa"); got != "one" {
		t.Fatalf("a conflicting apply changed data.key to %q", got)
	}

	// The API itself answers 409 Conflict naming the field.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ssa"},"data":{"key":"three"}}`
	_, err := srv.Clientset(t).CoreV1().ConfigMaps(ns).Patch(ctx, "ssa", types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: "other"})
	var status apierrors.APIStatus
	if !apierrors.IsConflict(err) || !asStatus(err, &status) || status.Status().Code != http.StatusConflict {
		t.Fatalf("conflicting apply through the API: want 409 Conflict, got %v", err)
	}
	if causes := status.Status().Details; causes == nil || len(causes.Causes) != 1 || causes.Causes[0].Field != ".data.key" {
		t.Errorf("conflict details = %+v, want one cause on field .data.key", status.Status().Details)
	}

	wantStdout(t, kubectlStdinOK(t, manifest("two"), "-n", ns, "apply", "--server-side", "--field-manager=intruder", "--force-conflicts", "-f", "-"),
		"configmap/ssa serverside-applied\n")
	if got := jsonpath(t, "{.data.key}", "-n", ns, "get", "configmap", "ssa"); got != "two" {
		t.Fatalf("data.key after --force-conflicts = %q, want two", got)
	}
	var cm corev1.ConfigMap
	getYAML(t, &cm, "-n", ns, "get", "configmap", "ssa", "--show-managed-fields")
	for _, mf := range cm.ManagedFields {
		if mf.Manager == "intruder" && mf.Operation == metav1.ManagedFieldsOperationApply && strings.Contains(string(mf.FieldsV1.Raw), `"f:key"`) {
			return
		}
	}
	t.Errorf("managedFields do not give data.key to intruder: %+v", cm.ManagedFields)
}

func TestDiffShowsChanges(t *testing.T) {
	ns := newNamespace(t, "diff")
	manifest := func(v string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\n  namespace: " + ns + "\ndata:\n  a: " + v + "\n"
	}
	kubectlStdinOK(t, manifest("b"), "apply", "-f", "-")

	res := srv.KubectlStdin(t, manifest("b"), "diff", "-f", "-")
	if res.ExitCode != 0 || res.Stdout != "" {
		t.Errorf("diff of an unchanged object: want exit 0 and no output, got %s", res)
	}
	res = srv.KubectlStdin(t, manifest("c"), "diff", "-f", "-")
	if res.ExitCode != 1 {
		t.Fatalf("diff of a changed object: want exit code 1, got %s", res)
	}
	wantMatch(t, res.Stdout, `(?m)^-  a: b$`, `(?m)^\+  a: c$`, `(?m)^\+\+\+ .*v1\.ConfigMap\.`+ns+`\.d`)
	if got := jsonpath(t, "{.data.a}", "-n", ns, "get", "configmap", "d"); got != "b" {
		t.Fatalf("diff changed the object: data.a = %q", got)
	}
}

// asStatus reports whether err carries a metav1.Status, storing it.
func asStatus(err error, out *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus)
	if ok {
		*out = s
	}
	return ok
}
