package volume

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
)

// fsGroup is the group the pod's volumes belong to, nil for none.
func fsGroup(pod *corev1.Pod) *int64 {
	if pod.Spec.SecurityContext == nil {
		return nil
	}
	return pod.Spec.SecurityContext.FSGroup
}

// fsUser is the user every container of the pod runs as, nil when one
// runs as the image's user or two differ: the owner upstream's kubelet
// gives projected credentials, so that the pod's user alone reads them.
func fsUser(pod *corev1.Pod) *int64 {
	var podUser *int64
	if pod.Spec.SecurityContext != nil {
		podUser = pod.Spec.SecurityContext.RunAsUser
	}
	var user *int64
	same := func(sc *corev1.SecurityContext) bool {
		u := podUser
		if sc != nil && sc.RunAsUser != nil {
			u = sc.RunAsUser
		}
		if u == nil || (user != nil && *user != *u) {
			return false
		}
		user = u
		return true
	}
	for i := range pod.Spec.InitContainers {
		if !same(pod.Spec.InitContainers[i].SecurityContext) {
			return nil
		}
	}
	for i := range pod.Spec.Containers {
		if !same(pod.Spec.Containers[i].SecurityContext) {
			return nil
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if !same(pod.Spec.EphemeralContainers[i].SecurityContext) {
			return nil
		}
	}
	return user
}

// Volume permission masks, as upstream's kubelet applies them with an
// fsGroup: projected volumes are read-only, so the group may read files
// and enter directories, and new directories keep the group (setgid).
const (
	readOnlyMask = 0o440
	dirMask      = readOnlyMask | 0o110 | fs.ModeSetgid
)

// setOwnership gives everything below dir (dir too) to the group gid and
// lets it read, as upstream's kubelet does for volumes of a pod with an
// fsGroup. Symbolic links change group but not mode: a link's mode is
// its target's.
func setOwnership(dir string, gid int64) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(path, -1, int(gid)); err != nil {
			return fmt.Errorf("chown %s: %w", path, err)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mask := fs.FileMode(readOnlyMask)
		if d.IsDir() {
			mask = dirMask
		}
		mode := info.Mode() & (fs.ModePerm | fs.ModeSetgid | fs.ModeSetuid | fs.ModeSticky)
		if err := os.Chmod(path, mode|mask); err != nil {
			return fmt.Errorf("chmod %s: %w", path, err)
		}
		return nil
	})
}
