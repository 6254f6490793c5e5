package apiserver_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

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

// wantStdout fails unless stdout is exactly want.
func wantStdout(t *testing.T, res testcluster.Result, want string) {
	t.Helper()
	if res.Stdout != want {
		t.Fatalf("stdout = %q, want %q\n%s", res.Stdout, want, res)
	}
}

// wantMatch fails unless text matches every pattern.
func wantMatch(t *testing.T, text string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile(p).MatchString(text) {
			t.Errorf("output does not match %q:\n%s", p, text)
		}
	}
}

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

// assertServing fails unless the server still answers /readyz and a read:
// bad input must never take it down.
func assertServing(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body, err := srv.Clientset(t).Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil || string(body) != "ok" {
		t.Fatalf("server stopped serving: GET /readyz = %q, %v", body, err)
	}
	kubectlOK(t, "get", "namespace", "default")
}

// table is kubectl's column output, cells keyed by header.
type table struct {
	header []string
	rows   []map[string]string
}

// parseTable reads kubectl's human-readable output. Columns are found by
// where the header's names start, since cells may be empty (SHORTNAMES of
// api-resources); kubectl pads columns with at least three spaces and a
// header name has at most single spaces inside.
func parseTable(t *testing.T, out string) table {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 || lines[0] == "" {
		t.Fatalf("no table in output %q", out)
	}
	head := lines[0]
	var starts []int
	var tb table
	for _, loc := range regexp.MustCompile(`\S+( \S+)*`).FindAllStringIndex(head, -1) {
		starts = append(starts, loc[0])
		tb.header = append(tb.header, head[loc[0]:loc[1]])
	}
	for _, line := range lines[1:] {
		row := map[string]string{}
		for i, start := range starts {
			end := len(line)
			if i+1 < len(starts) {
				end = min(starts[i+1], len(line))
			}
			if start < end {
				row[tb.header[i]] = strings.TrimSpace(line[start:end])
			} else {
				row[tb.header[i]] = ""
			}
		}
		tb.rows = append(tb.rows, row)
	}
	return tb
}

// wantHeader fails unless the table's columns are exactly names.
func (tb table) wantHeader(t *testing.T, names ...string) {
	t.Helper()
	if strings.Join(tb.header, "|") != strings.Join(names, "|") {
		t.Fatalf("columns = %q, want %q", tb.header, names)
	}
}

// row returns the row whose column key has value, failing if there is none.
func (tb table) row(t *testing.T, key, value string) map[string]string {
	t.Helper()
	for _, r := range tb.rows {
		if r[key] == value {
			return r
		}
	}
	t.Fatalf("no row with %s=%q in %v", key, value, tb.rows)
	return nil
}
