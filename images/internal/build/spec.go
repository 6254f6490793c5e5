package build

import (
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
)

// Spec describes one image: where it is referenced, what goes into its single layer and
// how its config reads. The same Spec (and the same host file contents) always yields the
// same archive bytes; host file timestamps and ownership never reach the output.
type Spec struct {
	// Ref is the full reference with an explicit registry and tag,
	// e.g. "trireme.dev/pause:v0.1.0".
	Ref string
	// Files are host files copied into the layer; they win over BaseDirs entries at the
	// same image path.
	Files []File
	// Symlinks are created in the layer as given; parents are created as directories.
	Symlinks []Symlink
	// Dirs are directories created with the given mode even when nothing lives in them,
	// such as a sticky /tmp.
	Dirs []Dir
	// BaseDirs are host directory trees copied onto the image root, in order (a later
	// tree's file replaces an earlier one's). Symlinks inside them are kept as symlinks.
	BaseDirs []string
	// Entrypoint, Cmd, Env, User and WorkingDir go to the image config as written,
	// except that Env gets a default PATH when it sets none, as Docker-built images do.
	Entrypoint []string
	Cmd        []string
	Env        []string
	User       string
	WorkingDir string
	// OS and Architecture name the platform; empty means linux and amd64.
	OS           string
	Architecture string
	// Created is the image creation time and the mtime of every layer entry; the zero
	// value means the Unix epoch. Sub-second parts are dropped.
	Created time.Time
}

// File maps one host file into the image.
type File struct {
	// Source is the host path; symlinks are followed.
	Source string
	// Target is the absolute path inside the image.
	Target string
	// Mode is the permission (and setuid/setgid/sticky) bits in the image; zero keeps
	// the host file's permission bits.
	Mode fs.FileMode
}

// Symlink is one symbolic link inside the image.
type Symlink struct {
	// Target is what the link points to, stored verbatim (relative or absolute).
	Target string
	// Link is the absolute path of the link inside the image.
	Link string
}

// Dir is one explicitly created directory inside the image.
type Dir struct {
	// Path is the absolute path inside the image.
	Path string
	// Mode is the permission (and setuid/setgid/sticky) bits; zero means 0755.
	Mode fs.FileMode
}

// defaultPath is the PATH Docker puts in images that set none; workloads such as
// `sh -c "sleep 1"` rely on it because CRI runtimes add no PATH of their own.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// ParseFile reads a --file value: "<hostpath>=<imagepath>[:mode]", mode in octal.
func ParseFile(s string) (File, error) {
	src, dst, ok := strings.Cut(s, "=")
	if !ok || src == "" || dst == "" {
		return File{}, fmt.Errorf("file %q: want <hostpath>=<imagepath>[:mode]", s)
	}
	target, mode, err := splitMode(dst)
	if err != nil {
		return File{}, fmt.Errorf("file %q: %w", s, err)
	}
	f := File{Source: src, Target: target, Mode: mode}
	if _, err := imagePath(f.Target); err != nil {
		return File{}, fmt.Errorf("file %q: %w", s, err)
	}
	return f, nil
}

// ParseDir reads a --dir value: "<imagepath>[:mode]", mode in octal.
func ParseDir(s string) (Dir, error) {
	p, mode, err := splitMode(s)
	if err != nil {
		return Dir{}, fmt.Errorf("dir %q: %w", s, err)
	}
	if _, err := imagePath(p); err != nil {
		return Dir{}, fmt.Errorf("dir %q: %w", s, err)
	}
	return Dir{Path: p, Mode: mode}, nil
}

// splitMode splits an optional ":<octal mode>" suffix off an image path.
func splitMode(s string) (string, fs.FileMode, error) {
	i := strings.LastIndex(s, ":")
	if i < 0 {
		return s, 0, nil
	}
	mode, err := strconv.ParseUint(s[i+1:], 8, 32)
	if err != nil || mode > 0o7777 {
		return "", 0, fmt.Errorf("mode %q is not an octal permission", s[i+1:])
	}
	return s[:i], permToMode(int64(mode)), nil
}

// ParseSymlink reads a --symlink value: "<target>=<linkpath>", the same order as ln -s.
func ParseSymlink(s string) (Symlink, error) {
	target, link, ok := strings.Cut(s, "=")
	if !ok || target == "" || link == "" {
		return Symlink{}, fmt.Errorf("symlink %q: want <target>=<linkpath>", s)
	}
	if _, err := imagePath(link); err != nil {
		return Symlink{}, fmt.Errorf("symlink %q: %w", s, err)
	}
	return Symlink{Target: target, Link: link}, nil
}

// imagePath turns an absolute image path into the relative, clean form tar entries use.
func imagePath(p string) (string, error) {
	if !path.IsAbs(p) {
		return "", fmt.Errorf("image path %q is not absolute", p)
	}
	clean := strings.TrimPrefix(path.Clean(p), "/")
	if clean == "" {
		return "", fmt.Errorf("image path %q names the root directory", p)
	}
	return clean, nil
}

// permToMode converts Unix permission bits (as in chmod) to an fs.FileMode.
func permToMode(bits int64) fs.FileMode {
	m := fs.FileMode(bits) & fs.ModePerm
	if bits&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if bits&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if bits&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// modeToPerm converts an fs.FileMode to the Unix permission bits a tar header carries.
func modeToPerm(m fs.FileMode) int64 {
	bits := int64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		bits |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		bits |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		bits |= 0o1000
	}
	return bits
}
