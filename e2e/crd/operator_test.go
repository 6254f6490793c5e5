package crd_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"trireme.dev/e2e/internal/backupoperator"

	"trireme.dev/componentbase/testwait"
)

// TestControllerRuntimeOperator runs an operator written with
// controller-runtime against the server: it must see its custom resources,
// own children through ownerReferences, write status through the status
// subresource and hold deletion with a finalizer until it has cleaned up.
// (The children's garbage collection needs the garbage collector, which
// the controller-manager does not run yet; the test checks the ownership
// the collector will act on.)
func TestControllerRuntimeOperator(t *testing.T) {
	kubectlStdinOK(t, backupoperator.CRD, "apply", "-f", "-")
	kubectlOK(t, "wait", "--for", "condition=Established", "--timeout", "60s", "crd/backups.ops.e2e.trireme.dev")
	cfg := srv.Config()
	ctrl.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- backupoperator.Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("operator: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("operator did not stop within 30s")
		}
	})

	ns := newNamespace(t, "operator")
	backup := func(target string) string {
		return fmt.Sprintf("apiVersion: ops.e2e.trireme.dev/v1\nkind: Backup\nmetadata: {name: nightly}\nspec: {target: %s}\n", target)
	}
	kubectlStdinOK(t, backup("db-1"), "apply", "-n", ns, "-f", "-")
	get := func(template string, args ...string) string {
		return kubectlOK(t, append(append([]string{"get", "-n", ns}, args...), "-o", "jsonpath="+template)...).Stdout
	}

	testwait.For(t, time.Minute, "Backup reconciled", func(context.Context) (bool, error) {
		got := get("{.status.phase} {.status.observedGeneration} {.metadata.generation} {.metadata.finalizers}", "backup", "nightly")
		return got == `Ready 1 1 ["`+backupoperator.Finalizer+`"]`, fmt.Errorf("phase, observed and current generation, finalizers: %q", got)
	})
	uid := get("{.metadata.uid}", "backup", "nightly")
	owner := get(`{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.metadata.ownerReferences[0].uid} {.metadata.ownerReferences[0].controller} {.data.target}`, "configmap", backupoperator.ChildName("nightly"))
	if want := "Backup/nightly " + uid + " true db-1"; owner != want {
		t.Errorf("child ConfigMap: owner and target %q, want %q", owner, want)
	}
	if out := kubectlOK(t, "get", "backups", "-n", ns).Stdout; !slices.Equal(header(out), []string{"NAME", "TARGET", "PHASE"}) || !strings.Contains(out, "db-1") {
		t.Errorf("kubectl get backups:\n%s", out)
	}

	// A spec change reaches the child, and the status says which
	// generation it reflects.
	kubectlStdinOK(t, backup("db-2"), "apply", "-n", ns, "-f", "-")
	testwait.For(t, time.Minute, "spec change reconciled", func(context.Context) (bool, error) {
		got := get("{.status.observedGeneration}", "backup", "nightly") + " " + get("{.data.target}", "configmap", backupoperator.ChildName("nightly"))
		return got == "2 db-2", fmt.Errorf("observed generation and child target: %q", got)
	})

	// kubectl delete waits while the finalizer holds the object.
	kubectlOK(t, "delete", "-n", ns, "backup", "nightly", "--timeout", "60s")
	if got := get("{.data.uid}", "configmap", backupoperator.CleanupName("nightly")); got != uid {
		t.Errorf("finalizer's clean-up record names %q, want the Backup's uid %q", got, uid)
	}
	if res := srv.Kubectl(t, "get", "-n", ns, "backup", "nightly"); res.ExitCode == 0 {
		t.Errorf("Backup still there after its finalizer ran: %s", res)
	}
}
