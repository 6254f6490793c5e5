package apiserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLabelAndAnnotate(t *testing.T) {
	ns := newNamespace(t, "label")
	kubectlOK(t, "-n", ns, "create", "configmap", "c", "--from-literal=a=b")
	steps := []struct {
		name       string
		args       []string
		wantStdout string
		wantErr    string
	}{
		{name: "add label", args: []string{"label", "configmap", "c", "env=prod"}, wantStdout: "configmap/c labeled\n"},
		{name: "add annotation", args: []string{"annotate", "configmap", "c", "note=hello"}, wantStdout: "configmap/c annotated\n"},
		{name: "relabel without overwrite refused", args: []string{"label", "configmap", "c", "env=dev"}, wantErr: "'env' already has a value (prod), and --overwrite is false"},
		{name: "relabel with overwrite", args: []string{"label", "configmap", "c", "env=dev", "--overwrite"}, wantStdout: "configmap/c labeled\n"},
		{name: "remove annotation", args: []string{"annotate", "configmap", "c", "note-"}, wantStdout: "configmap/c annotated\n"},
		{name: "add second label", args: []string{"label", "configmap", "c", "tier=web"}, wantStdout: "configmap/c labeled\n"},
		{name: "remove label", args: []string{"label", "configmap", "c", "tier-"}, wantStdout: "configmap/c unlabeled\n"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			res := srv.Kubectl(t, append([]string{"-n", ns}, st.args...)...)
			if st.wantErr != "" {
				if res.ExitCode == 0 || !strings.Contains(res.Stderr, st.wantErr) {
					t.Fatalf("want failure with %q, got %s", st.wantErr, res)
				}
				return
			}
			if res.ExitCode != 0 {
				t.Fatalf("failed: %s", res)
			}
			wantStdout(t, res, st.wantStdout)
		})
	}
	got := jsonpath(t, "{.metadata.labels} {.metadata.annotations}", "-n", ns, "get", "configmap", "c")
	if want := `{"env":"dev"} `; got != want {
		t.Fatalf("labels and annotations = %q, want %q", got, want)
	}
	if got := jsonpath(t, "{.items[*].metadata.name}", "-n", ns, "get", "configmap", "-l", "env=dev"); got != "c" {
		t.Fatalf("label selector env=dev found %q, want c", got)
	}
}

func TestEditWithKubeEditor(t *testing.T) {
	ns := newNamespace(t, "edit")
	kubectlOK(t, "-n", ns, "create", "configmap", "c", "--from-literal=a=b")
	editor := filepath.Join(t.TempDir(), "editor.sh")
	script := "#!/bin/sh\nsed -i -e 's/^  a: b$/  a: edited/' \"$1\"\n"
	if err := os.WriteFile(editor, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := srv.KubectlCmd("-n", ns, "edit", "configmap", "c")
	cmd.Env = []string{"KUBE_EDITOR=" + editor, "EDITOR=" + editor}
	res := cmd.Run(t)
	if res.ExitCode != 0 {
		t.Fatalf("kubectl edit failed: %s", res)
	}
	wantStdout(t, res, "configmap/c edited\n")
	if got := jsonpath(t, "{.data.a}", "-n", ns, "get", "configmap", "c"); got != "edited" {
		t.Fatalf("data.a after edit = %q, want edited", got)
	}
}
