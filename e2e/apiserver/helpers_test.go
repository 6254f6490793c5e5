package apiserver_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"trireme.dev/componentbase/testcluster"
)

// kubectlOK runs kubectl against the shared server and fails the test unless
// it exits 0.
func kubectlOK(t *testing.T, args ...string) testcluster.Result {
	t.Helper()
	return srv.KubectlCmd(args...).RunOK(t)
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

// wantStdout and wantMatch are testcluster's checks, under the names these
// tests use.
var (
	wantStdout = testcluster.WantStdout
	wantMatch  = testcluster.WantMatch
)

// jsonpath returns the value kubectl prints for a JSONPath template.
func jsonpath(t *testing.T, template string, args ...string) string {
	t.Helper()
	return kubectlOK(t, append(args, "-o", "jsonpath="+template)...).Stdout
}

// newNamespace creates a namespace for one test with kubectl, checking
// kubectl's confirmation line. The server is thrown away after the suite,
// so the namespace is not deleted.
func newNamespace(t *testing.T, name string) string {
	t.Helper()
	wantStdout(t, kubectlOK(t, "create", "namespace", name), "namespace/"+name+" created\n")
	return name
}

// getYAML fetches an object as YAML and decodes it into obj.
func getYAML(t *testing.T, obj any, args ...string) string {
	t.Helper()
	out := kubectlOK(t, append(args, "-o", "yaml")...).Stdout
	if err := yaml.Unmarshal([]byte(out), obj); err != nil {
		t.Fatalf("decode kubectl %s -o yaml: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}
