package cgroupfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opencontainers/cgroups"
)

func TestRemove(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making cgroups needs root")
	}
	mounts, err := cgroups.GetCgroupMounts(false)
	if err != nil || len(mounts) == 0 {
		t.Skipf("no cgroup hierarchy mounted: %v", err)
	}
	parent := filepath.Join("/trireme-cgroupfs-test-"+filepath.Base(t.TempDir()), "kubepods")
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
	h, err := Mounted()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Remove(parent); err != nil {
		t.Fatalf("Remove(%s): %v", parent, err)
	}
	for _, m := range mounts {
		if _, err := os.Stat(filepath.Join(m.Mountpoint, parent)); !os.IsNotExist(err) {
			t.Errorf("%s still exists (stat: %v)", filepath.Join(m.Mountpoint, parent), err)
		}
	}
	if err := h.Remove(parent); err != nil {
		t.Errorf("removing a removed cgroup: %v", err)
	}
}

// TestReclaimMemory charges page cache to a cgroup below a pod's, as a
// container writing a file does, removes that cgroup as the runtime does,
// and checks that reclaiming the pod's cgroup frees what the removed one
// still held.
func TestReclaimMemory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making cgroups needs root")
	}
	h, err := Mounted()
	if err != nil {
		t.Skipf("no cgroup hierarchy mounted: %v", err)
	}
	root, unified := h.Memory, h.Unified
	if root == "" {
		t.Skip("no memory controller")
	}
	usageFile := "memory.usage_in_bytes"
	if unified {
		usageFile = "memory.current"
	}
	pod := filepath.Join(root, "trireme-cgroupfs-test-"+filepath.Base(t.TempDir()))
	container := filepath.Join(pod, "container")
	if err := os.MkdirAll(container, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cgroups.RemovePath(pod) })
	if unified {
		// v2 distributes a controller to children only when asked to.
		if err := cgroups.WriteFile(pod, "cgroup.subtree_control", "+memory"); err != nil {
			t.Skipf("enable memory below the test cgroup: %v", err)
		}
	}
	// The file lives on disk, not tmpfs: tmpfs pages without swap cannot
	// be reclaimed.
	data, err := os.CreateTemp("/var/tmp", "trireme-reclaim-")
	if err != nil {
		t.Fatal(err)
	}
	data.Close()
	t.Cleanup(func() { _ = os.Remove(data.Name()) })
	const size = 8 << 20
	write := exec.Command("/bin/sh", "-c", `echo $$ > "$1/cgroup.procs" && head -c `+strconv.Itoa(size)+` /dev/zero > "$2"`, "sh", container, data.Name())
	if out, err := write.CombinedOutput(); err != nil {
		t.Fatalf("write in the container's cgroup: %v: %s", err, out)
	}
	if err := cgroups.RemovePath(container); err != nil {
		t.Fatalf("remove the container's cgroup: %v", err)
	}
	usage := func() uint64 {
		t.Helper()
		s, err := cgroups.ReadFile(pod, usageFile)
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if before := usage(); before < size/2 {
		t.Skipf("the removed cgroup's page cache is not charged to its parent (%d bytes): nothing to reclaim", before)
	}
	if err := ReclaimMemory(pod, unified); err != nil {
		t.Fatalf("ReclaimMemory: %v", err)
	}
	if after := usage(); after >= size/2 {
		t.Errorf("%d bytes still charged after reclaim, want under %d", after, size/2)
	}
	if err := ReclaimMemory(filepath.Join(root, "trireme-cgroupfs-test-gone"), unified); err != nil {
		t.Errorf("reclaiming a cgroup that does not exist: %v", err)
	}
}
