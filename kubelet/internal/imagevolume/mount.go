package imagevolume

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/containerd/containerd/api/types"
	"golang.org/x/sys/unix"
)

// mountFlags are the fstab options that are mount flags; the others are
// the file system's data.
var mountFlags = map[string]struct {
	clear bool
	flag  uintptr
}{
	"ro":     {flag: unix.MS_RDONLY},
	"rw":     {clear: true, flag: unix.MS_RDONLY},
	"bind":   {flag: unix.MS_BIND},
	"rbind":  {flag: unix.MS_BIND | unix.MS_REC},
	"nosuid": {flag: unix.MS_NOSUID},
	"nodev":  {flag: unix.MS_NODEV},
	"noexec": {flag: unix.MS_NOEXEC},
}

// parseOptions splits a mount's options into flags and data. Read-only is
// added whatever they say: an image volume is never writable.
func parseOptions(options []string) (uintptr, string) {
	var flags uintptr
	var data []string
	for _, o := range options {
		f, ok := mountFlags[o]
		switch {
		case !ok:
			data = append(data, o)
		case f.clear:
			flags &^= f.flag
		default:
			flags |= f.flag
		}
	}
	return flags | unix.MS_RDONLY, strings.Join(data, ",")
}

// mountReadOnly mounts m on target read-only. A bind mount takes a second
// call: the kernel ignores MS_RDONLY when binding.
func mountReadOnly(m *types.Mount, target string) error {
	flags, data := parseOptions(m.Options)
	if len(data) >= os.Getpagesize() {
		// overlayfs takes its lower directories in one page of options.
		return fmt.Errorf("%s mount options are %d bytes, more than the kernel takes", m.Type, len(data))
	}
	fstype := m.Type
	if flags&unix.MS_BIND != 0 {
		fstype = ""
	}
	if err := unix.Mount(m.Source, target, fstype, flags, data); err != nil {
		return fmt.Errorf("mount %s (%s): %w", m.Source, m.Type, err)
	}
	if flags&unix.MS_BIND == 0 {
		return nil
	}
	remount := unix.MS_REMOUNT | unix.MS_BIND | (flags &^ unix.MS_REC)
	if err := unix.Mount("", target, "", remount, ""); err != nil {
		_ = unix.Unmount(target, unix.MNT_DETACH)
		return fmt.Errorf("remount %s read-only: %w", target, err)
	}
	return nil
}

// unmountDir unmounts every mount stacked on dir; a dir that is no mount
// point, or is gone, is fine.
func unmountDir(dir string) error {
	for {
		mounted, err := IsMountPoint(dir)
		if errors.Is(err, os.ErrNotExist) || (err == nil && !mounted) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := unix.Unmount(dir, 0); err != nil {
			return fmt.Errorf("unmount %s: %w", dir, err)
		}
	}
}
