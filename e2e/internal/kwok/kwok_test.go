package kwok

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLocate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   []string
		wantErr string
	}{
		{"binary and stages", []string{"kwok", StagesFile}, ""},
		{"no binary", []string{StagesFile}, "kwok not found: run `make kwok`"},
		{"no stages", []string{"kwok"}, StagesFile + " not found: run `make kwok`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			stages, err := Locate(filepath.Join(dir, "kwok"))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Locate: %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || stages != filepath.Join(dir, StagesFile) {
				t.Fatalf("Locate = %q, %v; want %q", stages, err, filepath.Join(dir, StagesFile))
			}
		})
	}
}

// TestNodeIsManaged checks that a Node carries what kwok's flags select
// and what its stages need: the label, the fake-node annotation, capacity.
func TestNodeIsManaged(t *testing.T) {
	n := Node("n1")
	if n.Labels[Label] != "true" || n.Annotations["kwok.x-k8s.io/node"] != "fake" {
		t.Fatalf("labels %v, annotations %v: not one kwok manages", n.Labels, n.Annotations)
	}
	if n.Status.Allocatable.Pods().Value() != 110 || n.Status.Capacity.Cpu().IsZero() {
		t.Fatalf("capacity %v, allocatable %v", n.Status.Capacity, n.Status.Allocatable)
	}
}
