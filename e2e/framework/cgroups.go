package framework

import (
	"fmt"
	"path/filepath"

	"trireme.dev/componentbase/cgroupfs"
)

// RemoveCgroupTree removes the cgroup root (as "/trireme-e2e-kubelet-x")
// and every cgroup below it in each mounted hierarchy, with their memory
// reclaimed first, as the kubelet removes a pod's (package cgroupfs). A
// suite calls it once its kubelet and runtime are stopped, for the pod
// cgroups of pods still running then; a cgroup that still holds processes
// is an error.
func RemoveCgroupTree(root string) error {
	if filepath.Clean("/"+root) == "/" {
		return fmt.Errorf("refusing to remove the cgroup root %q", root)
	}
	h, err := cgroupfs.Mounted()
	if err != nil {
		return err
	}
	return h.Remove(root)
}
