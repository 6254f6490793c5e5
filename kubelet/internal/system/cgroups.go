package system

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/opencontainers/cgroups"
)

// RemoveCgroup removes the cgroup at path (as "/kubepods/burstable/pod<uid>")
// and the empty cgroups below it in every mounted hierarchy: one per
// controller on cgroup v1, the unified one on v2. The runtime removes its
// containers' cgroups but not the pod's, which the kubelet made the parent.
// A cgroup that still holds processes is an error; one that is gone is not.
func RemoveCgroup(path string) error {
	mounts, err := cgroups.GetCgroupMounts(false)
	if err != nil {
		return fmt.Errorf("list cgroup mounts: %w", err)
	}
	var errs []error
	for _, m := range mounts {
		if err := cgroups.RemovePath(filepath.Join(m.Mountpoint, path)); err != nil {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", filepath.Join(m.Mountpoint, path), err))
		}
	}
	return errors.Join(errs...)
}
