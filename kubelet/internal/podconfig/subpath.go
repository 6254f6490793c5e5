package podconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// subPath is the part of its volume a mount shows: subPath, or
// subPathExpr with the container's variables expanded. As upstream's
// kubelet, it refuses an expression naming a variable that is unset or
// empty, and any sub path that is absolute or steps up with "..", so that
// a mount never leaves its volume; the container then waits with
// CreateContainerConfigError until the pod is fixed.
func subPath(vm *corev1.VolumeMount, vars map[string]string) (string, error) {
	sub := vm.SubPath
	if vm.SubPathExpr != "" {
		missing := map[string]bool{}
		sub = expand(vm.SubPathExpr, func(name string) (string, bool) {
			v := vars[name]
			if v == "" {
				missing[name] = true
			}
			return v, true
		})
		if len(missing) > 0 {
			names := make([]string, 0, len(missing))
			for n := range missing {
				names = append(names, n)
			}
			sort.Strings(names)
			return "", fmt.Errorf("missing value for %s", strings.Join(names, ", "))
		}
	}
	if sub == "" {
		return "", nil
	}
	if filepath.IsAbs(sub) {
		return "", fmt.Errorf("error SubPath `%s` must not be an absolute path", sub)
	}
	if slices.Contains(strings.Split(sub, "/"), "..") {
		return "", fmt.Errorf("unable to provision SubPath `%s`: must not contain '..'", sub)
	}
	return sub, nil
}

// subPathOnHost returns the host path of sub inside the volume at
// volumePath, making it a directory with the volume directory's mode
// when it does not exist (left to the runtime, it would get a mode the
// pod's fsGroup cannot write to). Symbolic links are followed, but the
// result must stay inside the volume.
func subPathOnHost(volumePath, sub, volumeName, containerName string) (string, error) {
	root, err := filepath.EvalSymlinks(volumePath)
	if err != nil {
		return "", fmt.Errorf("volume %q: %w", volumeName, err)
	}
	host := filepath.Join(volumePath, sub)
	if _, err := os.Lstat(host); os.IsNotExist(err) {
		if err := makeSubPathDirs(root, sub); err != nil {
			// The host's paths are no business of the pod's owner.
			return "", fmt.Errorf("failed to create subPath directory for volumeMount %q of container %q", volumeName, containerName)
		}
	}
	resolved, err := filepath.EvalSymlinks(host)
	if err != nil {
		return "", fmt.Errorf("subPath %q of volume %q: %w", sub, volumeName, err)
	}
	if !within(root, resolved) {
		return "", fmt.Errorf("subpath %q not within volume path %q", sub, volumeName)
	}
	return resolved, nil
}

func within(root, path string) bool {
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}

// makeSubPathDirs makes each missing directory of sub below root (a path
// without symbolic links) with root's mode, umask aside; it follows no
// link out of root.
func makeSubPathDirs(root, sub string) error {
	fi, err := os.Stat(root)
	if err != nil {
		return err
	}
	perm := fi.Mode() & (os.ModePerm | os.ModeSetgid)
	dir := root
	for _, part := range strings.Split(filepath.Clean(sub), "/") {
		next := filepath.Join(dir, part)
		fi, err := os.Lstat(next)
		switch {
		case err == nil && fi.Mode()&os.ModeSymlink != 0:
			if next, err = filepath.EvalSymlinks(next); err != nil {
				return err
			}
			if !within(root, next) {
				return fmt.Errorf("%s leads out of the volume", part)
			}
		case err == nil:
		case os.IsNotExist(err):
			if err := os.Mkdir(next, perm); err != nil {
				return err
			}
			if err := os.Chmod(next, perm); err != nil {
				return err
			}
		default:
			return err
		}
		dir = next
	}
	return nil
}
