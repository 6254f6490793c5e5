package system

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/opencontainers/cgroups"
)

// RemoveCgroups removes the cgroups at paths (as "/kubepods/burstable/pod<uid>")
// and the empty cgroups below them in every mounted hierarchy: one per
// controller on cgroup v1, the unified one on v2. The runtime removes its
// containers' cgroups but not the pod's, which the kubelet made the parent.
// A cgroup that still holds processes is an error; one that is gone is not.
// The mounts are read once for all paths.
func RemoveCgroups(paths ...string) error {
	mounts, err := cgroups.GetCgroupMounts(false)
	if err != nil {
		return fmt.Errorf("list cgroup mounts: %w", err)
	}
	var errs []error
	for _, m := range mounts {
		for _, p := range paths {
			dir := filepath.Join(m.Mountpoint, p)
			if err := cgroups.RemovePath(dir); err != nil {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", dir, err))
			}
		}
	}
	return errors.Join(errs...)
}
