package images

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestList(t *testing.T) {
	got := List("trireme.dev", "v1.37.0-x")
	want := "trireme.dev/etcd:v1.37.0-x trireme.dev/trireme-apiserver:v1.37.0-x trireme.dev/trireme-controller-manager:v1.37.0-x trireme.dev/trireme-scheduler:v1.37.0-x trireme.dev/proxy:v1.37.0-x trireme.dev/coredns:v1.37.0-x trireme.dev/pause:v1.37.0-x trireme.dev/trireme-vip:v1.37.0-x"
	if strings.Join(got, " ") != want {
		t.Errorf("List = %v", got)
	}
}

func TestArchives(t *testing.T) {
	dir := t.TempDir()
	if _, err := Archives(dir); err == nil || !strings.Contains(err.Error(), "make images") {
		t.Errorf("empty dir: %v", err)
	}
	for _, f := range []string{"b.tar", "a.tar", "notes.txt"} {
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	got, err := Archives(dir)
	if err != nil || len(got) != 2 || filepath.Base(got[0]) != "a.tar" {
		t.Errorf("Archives = %v, %v", got, err)
	}
}
