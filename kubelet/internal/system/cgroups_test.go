package system

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/opencontainers/cgroups"
)

func TestRemoveCgroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making cgroups needs root")
	}
	mounts, err := cgroups.GetCgroupMounts(false)
	if err != nil || len(mounts) == 0 {
		t.Skipf("no cgroup hierarchy mounted: %v", err)
	}
	parent := filepath.Join("/trireme-kubelet-test-"+filepath.Base(t.TempDir()), "kubepods")
	leaf := filepath.Join(parent, "besteffort", "podabc")
	for _, m := range mounts {
		if err := os.MkdirAll(filepath.Join(m.Mountpoint, leaf), 0o755); err != nil {
			t.Fatalf("make %s: %v", leaf, err)
		}
	}
	t.Cleanup(func() {
		for _, m := range mounts {
			_ = cgroups.RemovePath(filepath.Join(m.Mountpoint, filepath.Dir(parent)))
		}
	})
	if err := RemoveCgroups(parent); err != nil {
		t.Fatalf("RemoveCgroups(%s): %v", parent, err)
	}
	for _, m := range mounts {
		if _, err := os.Stat(filepath.Join(m.Mountpoint, parent)); !os.IsNotExist(err) {
			t.Errorf("%s still exists (stat: %v)", filepath.Join(m.Mountpoint, parent), err)
		}
	}
	if err := RemoveCgroups(parent); err != nil {
		t.Errorf("removing a removed cgroup: %v", err)
	}
}
