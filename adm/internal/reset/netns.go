package reset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// ReleaseNetNS unmounts and removes the network namespace files in dir whose
// names start with prefix ("cni-", containerd's), even when `ip netns add` has
// bind-mounted dir onto itself since and so shadowed their mounts: containerd
// then unmounts only the visible copy and its unlink fails with EBUSY, since
// the shadowed mount is still a mount point in this mount namespace.
//
// A shell in a private mount namespace peels the mounts stacked on dir until
// the shadowed ones show, unmounts them and unlinks the file. The kernel
// allows unlinking a file that is a mount point only in other namespaces, and
// detaches those mounts then, so the host loses the pod's namespace mounts
// and file while every other mount on dir (the user's own `ip netns`
// namespaces) stays. A child process, not a thread of ours: a Go thread left
// in another mount namespace could be the main one, which never exits.
func ReleaseNetNS(ctx context.Context, dir, prefix string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var files []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	if len(files) == 0 {
		return nil, nil
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", releaseScript, "release-netns", dir}, files...)...)
	// Go makes every mount private in the child's new namespace, so that
	// nothing it unmounts propagates back.
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("release the network namespaces in %s: %w: %s", dir, err, strings.TrimSpace(string(out)))
	}
	return files, nil
}

// releaseScript removes each file ($2...) in dir ($1), peeling at most 8
// mounts stacked on dir (`ip netns` adds one) while it is busy.
const releaseScript = `dir=$1; shift
for p in "$@"; do
  i=0
  while :; do
    umount -l "$p" 2>/dev/null
    rm -f "$p" 2>/dev/null && break
    if [ "$i" -ge 8 ] || ! umount -l "$dir"; then
      rm -f "$p"
      exit 1
    fi
    i=$((i+1))
  done
done
`
