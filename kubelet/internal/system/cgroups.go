package system

import "trireme.dev/componentbase/cgroupfs"

// RemoveCgroups removes the cgroups at paths (as "/kubepods/burstable/pod<uid>")
// and the empty cgroups below them in every mounted hierarchy, with their
// memory reclaimed first (see package cgroupfs). The runtime removes its
// containers' cgroups but not the pod's, which the kubelet made the parent.
// The mounts are read once for all paths.
func RemoveCgroups(paths ...string) error {
	h, err := cgroupfs.Mounted()
	if err != nil {
		return err
	}
	return h.Remove(paths...)
}
