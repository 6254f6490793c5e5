package reset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReleaseNetNS reproduces what `ip netns add` does to a pod's network
// namespace in the same directory (issue 28: reset failed with "unlinkat
// /run/netns/cni-...: device or resource busy") on a directory of its own, and
// checks that ReleaseNetNS removes the pod's namespaces and keeps the user's.
func TestReleaseNetNS(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	dir := filepath.Join(t.TempDir(), "netns")
	os.MkdirAll(dir, 0o755)
	t.Cleanup(func() {
		for _, p := range []string{filepath.Join(dir, "user"), dir, dir, filepath.Join(dir, "cni-b"), filepath.Join(dir, "cni-a")} {
			unix.Unmount(p, unix.MNT_DETACH)
		}
	})
	mountNS := func(p string) {
		t.Helper()
		if err := os.WriteFile(p, nil, 0o444); err != nil {
			t.Fatal(err)
		}
		// What containerd does: the namespace's nsfs file bind-mounted on it.
		if err := unix.Mount("/proc/self/ns/net", p, "", unix.MS_BIND, ""); err != nil {
			t.Fatalf("bind %s: %v", p, err)
		}
	}
	mountNS(filepath.Join(dir, "cni-a"))
	mountNS(filepath.Join(dir, "cni-b"))
	// What `ip netns add` does when dir is not a mount point yet: a recursive
	// bind of dir onto itself made shared, then its own namespace there.
	if err := unix.Mount(dir, dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("", dir, "", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		t.Fatal(err)
	}
	mountNS(filepath.Join(dir, "user"))

	// What containerd's RemovePodSandbox does, and how it failed.
	a := filepath.Join(dir, "cni-a")
	if err := unix.Unmount(a, unix.MNT_DETACH); err != nil {
		t.Fatalf("unmount the visible copy: %v", err)
	}
	if err := unix.Unlink(a); !errors.Is(err, unix.EBUSY) {
		t.Fatalf("unlink of a shadowed namespace: got %v, want EBUSY (the failure is not reproduced)", err)
	}

	done, err := ReleaseNetNS(context.Background(), dir, "cni-")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{a, filepath.Join(dir, "cni-b")}; strings.Join(done, ",") != strings.Join(want, ",") {
		t.Errorf("released %v, want %v", done, want)
	}
	for _, p := range []string{a, filepath.Join(dir, "cni-b")} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind: %v", p, err)
		}
	}
	info, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(info), dir+"/cni-") {
		t.Errorf("a pod's namespace is still mounted:\n%s", grepLines(string(info), dir))
	}
	if !strings.Contains(string(info), dir+"/user ") {
		t.Errorf("the user's namespace was unmounted:\n%s", grepLines(string(info), dir))
	}
	// Nothing to do the second time.
	if done, err := ReleaseNetNS(context.Background(), dir, "cni-"); err != nil || len(done) != 0 {
		t.Errorf("second run: %v, %v", done, err)
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
