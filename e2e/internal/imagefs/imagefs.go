// Package imagefs unpacks an image `make images` built into a directory, so
// that a suite can run a component chrooted there: with the binaries and
// libraries its image carries, and nothing of the host's.
package imagefs

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"trireme.dev/componentbase/testcluster"
)

// Unpack unpacks _output/images/<name>.tar (a docker-archive) into a
// temporary directory and returns it, with /dev/null made as a container
// runtime would.
func Unpack(tb testing.TB, name string) string {
	tb.Helper()
	archive := filepath.Join(testcluster.BinDir(), "..", "images", name+".tar")
	if _, err := os.Stat(archive); err != nil {
		tb.Fatalf("%v: run make images", err)
	}
	dir, root := tb.TempDir(), tb.TempDir()
	if out, err := exec.Command("tar", "-xf", archive, "-C", dir).CombinedOutput(); err != nil {
		tb.Fatalf("unpack %s: %v: %s", archive, err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var manifest []struct{ Layers []string }
	if err := json.Unmarshal(data, &manifest); err != nil || len(manifest) != 1 {
		tb.Fatalf("%s: manifest.json: %v %s", archive, err, data)
	}
	for _, l := range manifest[0].Layers {
		if out, err := exec.Command("tar", "-xzf", filepath.Join(dir, l), "-C", root).CombinedOutput(); err != nil {
			tb.Fatalf("unpack layer %s: %v: %s", l, err, out)
		}
	}
	// A container runtime gives every container /dev/null; so does this.
	if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := syscall.Mknod(filepath.Join(root, "dev", "null"), syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		tb.Fatalf("mknod /dev/null: %v", err)
	}
	return root
}
