package controllermanager_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"trireme.dev/componentbase/testcluster"
	"trireme.dev/componentbase/testwait"
)

// newNamespace creates a namespace for one test, waits for its default
// ServiceAccount (pods are refused until it exists) and deletes it at the
// end.
func newNamespace(t testing.TB, cs kubernetes.Interface, prefix string) string {
	t.Helper()
	ctx := context.Background()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("namespace %s never got its default ServiceAccount: %v", ns.Name, err)
	}
	return ns.Name
}

// kubectl runs kubectl and fails t unless it exits 0.
func kubectl(t *testing.T, args ...string) testcluster.Result {
	t.Helper()
	res := srv.Kubectl(t, args...)
	if res.ExitCode != 0 {
		t.Fatalf("kubectl %v: %s", args, res)
	}
	return res
}

// waitForIn is waitFor that dumps namespace ns's objects on failure.
func waitForIn(t *testing.T, ns string, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := testwait.Default.Until(t.Context(), timeout, cond); err != nil {
		if ns != "" {
			dump(t, ns)
		}
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
