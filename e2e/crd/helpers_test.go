package crd_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"trireme.dev/componentbase/testcluster"
)

// kubectlOK runs kubectl against the shared server and fails the test unless
// it exits 0.
func kubectlOK(t *testing.T, args ...string) testcluster.Result {
	t.Helper()
	res := srv.Kubectl(t, args...)
	if res.ExitCode != 0 {
		t.Fatalf("kubectl %s failed: %s", strings.Join(args, " "), res)
	}
	return res
}

// kubectlStdinOK is kubectlOK with stdin, as for `apply -f -`.
func kubectlStdinOK(t *testing.T, stdin string, args ...string) testcluster.Result {
	t.Helper()
	res := srv.KubectlStdin(t, stdin, args...)
	if res.ExitCode != 0 {
		t.Fatalf("kubectl %s failed: %s", strings.Join(args, " "), res)
	}
	return res
}

var nameCounter atomic.Int64

// newNamespace creates a namespace of its own for one test. The server is
// thrown away after the suite, so it is not deleted.
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", prefix, nameCounter.Add(1))
	kubectlOK(t, "create", "namespace", name)
	return name
}

// header returns the column names of kubectl's table output.
func header(out string) []string {
	first, _, _ := strings.Cut(out, "\n")
	return strings.Fields(first)
}
