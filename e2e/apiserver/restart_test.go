package apiserver_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"trireme.dev/componentbase/testcluster"
)

// identity is what must survive a restart unchanged.
type identity struct{ uid, resourceVersion string }

func identities(t *testing.T, cs kubernetes.Interface, ns string) map[string]identity {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := map[string]identity{}
	nsObj, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out["namespace"] = identity{string(nsObj.UID), nsObj.ResourceVersion}
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "c", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out["configmap"] = identity{string(cm.UID), cm.ResourceVersion}
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out["deployment"] = identity{string(d.UID), d.ResourceVersion}
	return out
}

// TestRestartKeepsObjects runs its own server: restarting the shared one
// would disturb the other tests.
func TestRestartKeepsObjects(t *testing.T) {
	s := testcluster.StartAPIServer(t, serverOptions())
	run := func(args ...string) string {
		t.Helper()
		res := s.Kubectl(t, args...)
		if res.ExitCode != 0 {
			t.Fatalf("kubectl %s failed: %s", strings.Join(args, " "), res)
		}
		return res.Stdout
	}
	run("create", "namespace", "demo")
	run("-n", "demo", "create", "configmap", "c", "--from-literal=a=b")
	run("-n", "demo", "create", "deployment", "web", "--image=busybox", "--replicas=3", "--", "sleep", "3600")
	run("-n", "demo", "expose", "deployment", "web", "--port", "80")
	webIP := run("-n", "demo", "get", "service", "web", "-o", "jsonpath={.spec.clusterIP}")
	before := identities(t, s.Clientset(t), "demo")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	oldPID := s.PID()
	if err := s.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if s.PID() == oldPID {
		t.Fatalf("restart kept pid %d", oldPID)
	}
	after := identities(t, s.Clientset(t), "demo")
	for obj, id := range before {
		if after[obj] != id {
			t.Errorf("%s: uid/resourceVersion %v before restart, %v after", obj, id, after[obj])
		}
	}
	if got := run("-n", "demo", "get", "configmap", "c", "-o", "jsonpath={.data.a}"); got != "b" {
		t.Errorf("configmap data after restart = %q, want b", got)
	}
	if got := run("get", "service", "kubernetes", "-o", "jsonpath={.spec.clusterIP}"); got != kubernetesSvcIP {
		t.Errorf("kubernetes service IP after restart = %q, want %s", got, kubernetesSvcIP)
	}
	// The allocator must know web's address is taken after the restart.
	res := s.KubectlStdin(t, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"steal","namespace":"demo"},
		"spec":{"clusterIP":"`+webIP+`","ports":[{"port":80}]}}`, "create", "-f", "-")
	if res.ExitCode != 1 || !strings.Contains(res.Stderr, "provided IP is already allocated") {
		t.Errorf("creating a service on web's address %s after restart: want upstream's \"provided IP is already allocated\", got %s", webIP, res)
	}
	// New writes continue etcd's revision sequence instead of reusing it.
	run("-n", "demo", "label", "configmap", "c", "after=restart")
	rv := run("-n", "demo", "get", "configmap", "c", "-o", "jsonpath={.metadata.resourceVersion}")
	newRV, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q is not etcd's revision: %v", rv, err)
	}
	for obj, id := range before {
		if old, _ := strconv.ParseUint(id.resourceVersion, 10, 64); newRV <= old {
			t.Errorf("resourceVersion of a write after restart (%d) is not beyond the %s's from before (%d)", newRV, obj, old)
		}
	}
}
