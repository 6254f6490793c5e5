package reset

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"

	"trireme.dev/componentbase/cgroupfs"
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
// pods' cgroups, in every mounted hierarchy once the pods are gone, with
// their memory reclaimed first (see package cgroupfs), and the cgroup root
// itself when it is the node's own and left empty. It reports whether
// anything was there.
func RemovePodCgroups(cgroupRoot string) (bool, error) {
	if cgroupRoot == "" {
		cgroupRoot = "/"
	}
	h, err := cgroupfs.Mounted()
	if err != nil {
		return false, err
	}
	kubepods := path.Join(cgroupRoot, "kubepods")
	found := false
	for _, root := range h.Roots {
		if _, err := os.Stat(filepath.Join(root, kubepods)); err == nil {
			found = true
		}
	}
	if !found {
		return false, nil
	}
	if err := h.Remove(kubepods); err != nil {
		return true, err
	}
	if path.Clean(cgroupRoot) != "/" {
		for _, root := range h.Roots {
			// Only an empty root goes: it may hold someone else's cgroups.
			_ = os.Remove(filepath.Join(root, cgroupRoot))
		}
	}
	return true, nil
}
