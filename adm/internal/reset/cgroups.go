package reset

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/opencontainers/cgroups"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

// readKubeletConfig reads the node's KubeletConfiguration for the places the
// kubelet kept things outside triremeadm's directories, and whether there is
// one; a missing file gives an empty configuration (the node never got that
// far).
func readKubeletConfig(file string) (*kubeletv1beta1.KubeletConfiguration, bool, error) {
	kc := &kubeletv1beta1.KubeletConfiguration{}
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return kc, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if err := yaml.Unmarshal(data, kc); err != nil {
		return nil, false, fmt.Errorf("%s: %w", file, err)
	}
	return kc, true, nil
}

// RemovePodCgroups removes <cgroupRoot>/kubepods, where the kubelet put its
// pods' cgroups, in every mounted hierarchy once the pods are gone (on
// cgroup v1 with v2 beside it, the unified one too: runc makes cgroups
// there as well), and the cgroup root itself when it is the node's own and
// left empty. It reports whether anything was there.
func RemovePodCgroups(cgroupRoot string) (bool, error) {
	if cgroupRoot == "" {
		cgroupRoot = "/"
	}
	mounts, err := cgroups.GetCgroupMounts(false)
	if err != nil {
		return false, fmt.Errorf("list cgroup mounts: %w", err)
	}
	roots := make([]string, 0, len(mounts)+1)
	for _, m := range mounts {
		roots = append(roots, m.Mountpoint)
	}
	if cgroups.IsCgroup2HybridMode() {
		if root, err := cgroups.FindCgroupMountpoint("", ""); err == nil {
			roots = append(roots, root)
		}
	}
	found := false
	var errs []error
	for _, root := range roots {
		dir := filepath.Join(root, cgroupRoot, "kubepods")
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		found = true
		if err := cgroups.RemovePath(dir); err != nil {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", dir, err))
			continue
		}
		if path.Clean(cgroupRoot) != "/" {
			// Only an empty root goes: it may hold someone else's cgroups.
			_ = os.Remove(filepath.Join(root, cgroupRoot))
		}
	}
	return found, errors.Join(errs...)
}
