package build

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path"
	"strings"
)

// BusyboxLinks lists the applets compiled into the busybox binary at hostBinary (by
// running it with --list, so the links match exactly what that build provides) and
// returns one symlink per applet beside target, where that binary lives in the image,
// pointing to it by its base name. That is the layout of the upstream busybox image,
// where every applet is in /bin.
func BusyboxLinks(ctx context.Context, hostBinary, target string) ([]Symlink, error) {
	if _, err := imagePath(target); err != nil {
		return nil, fmt.Errorf("busybox links: %w", err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, hostBinary, "--list")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("list applets of %s: %w: %s", hostBinary, err, strings.TrimSpace(stderr.String()))
	}
	dir, self := path.Split(path.Clean(target))
	var links []Symlink
	for _, applet := range strings.Fields(stdout.String()) {
		if applet == self {
			continue
		}
		if strings.Contains(applet, "/") || applet == "." || applet == ".." {
			return nil, fmt.Errorf("list applets of %s: unexpected applet name %q", hostBinary, applet)
		}
		links = append(links, Symlink{Target: self, Link: dir + applet})
	}
	if len(links) == 0 {
		return nil, fmt.Errorf("list applets of %s: none listed", hostBinary)
	}
	return links, nil
}
