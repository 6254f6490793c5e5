package framework

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// cgroupFS is where the cgroup hierarchies are mounted.
const cgroupFS = "/sys/fs/cgroup"

// RemoveCgroupTree removes the cgroup root (as "/trireme-e2e-kubelet-x")
// and every cgroup below it, deepest first, in each hierarchy: one per
// controller and the unified one beside them on cgroup v1, the single one
// on v2, having the kernel reclaim the tree's memory first. A suite calls
// it once its kubelet and runtime are stopped, for the pod cgroups of pods
// still running then; a cgroup that still holds processes is an error.
func RemoveCgroupTree(root string) error {
	if filepath.Clean("/"+root) == "/" {
		return fmt.Errorf("refusing to remove the cgroup root %q", root)
	}
	tops := []string{filepath.Join(cgroupFS, root)}
	if entries, err := os.ReadDir(cgroupFS); err == nil {
		for _, e := range entries {
			if e.IsDir() {
				tops = append(tops, filepath.Join(cgroupFS, e.Name(), root))
			}
		}
	}
	var errs []error
	for _, top := range tops {
		var dirs []string
		err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		reclaimMemory(top)
		// Deepest first: a cgroup goes only once its children have.
		slices.Reverse(dirs)
		for _, d := range dirs {
			if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// reclaimMemory has the kernel reclaim the page cache still charged to the
// memory cgroup at dir and below it, if dir is one, as the kubelet does
// before removing a pod's cgroup: otherwise the removed cgroups linger,
// dying, and slow every later suite on the machine. Best effort: the
// removal that follows reports what matters.
func reclaimMemory(dir string) {
	if err := os.WriteFile(filepath.Join(dir, "memory.force_empty"), []byte("0"), 0); err == nil {
		return
	}
	if cur, err := os.ReadFile(filepath.Join(dir, "memory.current")); err == nil {
		_ = os.WriteFile(filepath.Join(dir, "memory.reclaim"), bytes.TrimSpace(cur), 0)
	}
}
