package system

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/opencontainers/cgroups"
)

// RemoveCgroups removes the cgroups at paths (as "/kubepods/burstable/pod<uid>")
// and the empty cgroups below them in every mounted hierarchy: one per
// controller on cgroup v1, and the unified one on v2 or beside v1 (hybrid
// mode, where runc makes each container a cgroup there too, and so its
// pod's). The runtime removes its containers' cgroups but not the pod's,
// which the kubelet made the parent. A cgroup that still holds processes
// is an error; one that is gone is not. The mounts are read once for all
// paths.
func RemoveCgroups(paths ...string) error {
	mounts, err := cgroups.GetCgroupMounts(false)
	if err != nil {
		return fmt.Errorf("list cgroup mounts: %w", err)
	}
	roots := make([]string, 0, len(mounts)+1)
	for _, m := range mounts {
		roots = append(roots, m.Mountpoint)
	}
	if cgroups.IsCgroup2HybridMode() {
		// Left there, every pod that ever ran kept a cgroup in the
		// unified hierarchy.
		if root, err := cgroups.FindCgroupMountpoint("", ""); err == nil {
			roots = append(roots, root)
		}
	}
	var errs []error
	for _, root := range roots {
		for _, p := range paths {
			dir := filepath.Join(root, p)
			if err := cgroups.RemovePath(dir); err != nil {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", dir, err))
			}
		}
	}
	return errors.Join(errs...)
}
