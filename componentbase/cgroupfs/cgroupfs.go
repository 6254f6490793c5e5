// Package cgroupfs removes the cgroups of pods as a node must on cgroup v1,
// v2 and hybrid hosts: in every hierarchy, with the memory still charged to
// them reclaimed first. The kubelet uses it for each pod it is done with,
// triremeadm reset for what is left of the node's pods.
package cgroupfs

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/opencontainers/cgroups"
)

// Hierarchies are the cgroup hierarchies mounted on the host.
type Hierarchies struct {
	// Roots are the mountpoints of every hierarchy: one per controller on
	// v1, plus the unified one beside them in hybrid mode (where runc
	// makes each container a cgroup there too, and so its pod's); the
	// single unified one on v2.
	Roots []string
	// Memory is the mountpoint of the hierarchy with the memory
	// controller, empty without one.
	Memory string
	// Unified says the host runs cgroup v2 alone.
	Unified bool
}

// Mounted reads the host's mounted hierarchies.
func Mounted() (Hierarchies, error) {
	mounts, err := cgroups.GetCgroupMounts(false)
	if err != nil {
		return Hierarchies{}, fmt.Errorf("list cgroup mounts: %w", err)
	}
	h := Hierarchies{Unified: cgroups.IsCgroup2UnifiedMode(), Roots: make([]string, 0, len(mounts)+1)}
	for _, m := range mounts {
		h.Roots = append(h.Roots, m.Mountpoint)
		if slices.Contains(m.Subsystems, "memory") {
			h.Memory = m.Mountpoint
		}
	}
	if cgroups.IsCgroup2HybridMode() {
		// Left there, every pod that ever ran would keep a cgroup in
		// the unified hierarchy.
		if root, err := cgroups.FindCgroupMountpoint("", ""); err == nil {
			h.Roots = append(h.Roots, root)
		}
	}
	return h, nil
}

// Remove removes the cgroups at paths (as "/kubepods/burstable/pod<uid>")
// and the empty cgroups below them in every hierarchy, once it has had the
// kernel reclaim the memory charged to each (see ReclaimMemory). A cgroup
// that still holds processes is an error; one that is gone is not.
func (h Hierarchies) Remove(paths ...string) error {
	var errs []error
	if h.Memory != "" {
		for _, p := range paths {
			dir := filepath.Join(h.Memory, p)
			if err := ReclaimMemory(dir, h.Unified); err != nil {
				errs = append(errs, fmt.Errorf("reclaim memory of cgroup %s: %w", dir, err))
			}
		}
	}
	for _, root := range h.Roots {
		for _, p := range paths {
			dir := filepath.Join(root, p)
			if err := cgroups.RemovePath(dir); err != nil {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", dir, err))
			}
		}
	}
	return errors.Join(errs...)
}

// ReclaimMemory has the kernel reclaim what is still charged to the memory
// cgroup at dir (in the memory hierarchy; unified on a v2 host) and below
// it, once its processes are gone: mostly page cache its containers read
// or wrote. A removed cgroup the kernel still charges pages to lingers,
// dying, until memory pressure reclaims them, and on a node with memory to
// spare that is never. Each lingering cgroup makes later cgroup creation,
// removal and memory accounting slower: on the test machines, 600 of them
// (six 100-pod runs) raised the kubelet's idle CPU from 1.4 % to 5 % and a
// 100-pod burst's p99 from 3.2 s to 5.7 s. Upstream's kubelet leaves them.
//
// On v1 this writes memory.force_empty, which reclaims until nothing is
// charged or reclaim makes no progress (tmpfs pages without swap), then
// returns. On v2 it asks memory.reclaim for memory.current's worth; EAGAIN
// says not all of it could be. What is left moves to the parent. A cgroup
// that does not exist is not an error.
func ReclaimMemory(dir string, unified bool) error {
	var err error
	if unified {
		var cur string
		if cur, err = cgroups.ReadFile(dir, "memory.current"); err == nil {
			cur = strings.TrimSpace(cur)
			if n, perr := strconv.ParseUint(cur, 10, 64); perr != nil || n == 0 {
				return perr
			}
			if err = cgroups.WriteFile(dir, "memory.reclaim", cur); errors.Is(err, syscall.EAGAIN) {
				err = nil
			}
		}
	} else {
		err = cgroups.WriteFile(dir, "memory.force_empty", "0")
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
