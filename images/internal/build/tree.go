package build

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// kind is what a layer entry is.
type kind int

const (
	kindDir kind = iota
	kindFile
	kindSymlink
)

func (k kind) String() string {
	return [...]string{"directory", "file", "symlink"}[k]
}

// entry is one path in the layer before it is written.
type entry struct {
	kind kind
	// perm is the Unix permission bits written to the tar header.
	perm int64
	// source is the host file a kindFile entry is read from.
	source string
	// linkname is a kindSymlink entry's target.
	linkname string
}

// tree gathers layer entries keyed by clean relative image path.
type tree map[string]entry

// newTree lays out a Spec's base directories, then its directories, files and symlinks.
func newTree(s Spec) (tree, error) {
	t := tree{}
	for _, dir := range s.BaseDirs {
		if err := t.addBaseDir(dir); err != nil {
			return nil, fmt.Errorf("base dir %s: %w", dir, err)
		}
	}
	explicit := map[string]bool{}
	for _, d := range s.Dirs {
		p, err := imagePath(d.Path)
		if err != nil {
			return nil, fmt.Errorf("dir: %w", err)
		}
		if explicit[p] {
			return nil, fmt.Errorf("image path /%s is given twice", p)
		}
		explicit[p] = true
		mode := d.Mode
		if mode == 0 {
			mode = 0o755
		}
		if err := t.put(p, entry{kind: kindDir, perm: modeToPerm(mode)}); err != nil {
			return nil, err
		}
	}
	for _, f := range s.Files {
		p, err := imagePath(f.Target)
		if err != nil {
			return nil, fmt.Errorf("file %s: %w", f.Source, err)
		}
		if explicit[p] {
			return nil, fmt.Errorf("image path /%s is given twice", p)
		}
		explicit[p] = true
		info, err := os.Stat(f.Source)
		if err != nil {
			return nil, fmt.Errorf("file %s: %w", f.Source, err)
		}
		if !info.Mode().IsRegular() {
			return nil, fmt.Errorf("file %s: not a regular file", f.Source)
		}
		mode := f.Mode
		if mode == 0 {
			mode = info.Mode().Perm()
		}
		if err := t.put(p, entry{kind: kindFile, perm: modeToPerm(mode), source: f.Source}); err != nil {
			return nil, err
		}
	}
	for _, l := range s.Symlinks {
		p, err := imagePath(l.Link)
		if err != nil {
			return nil, fmt.Errorf("symlink %s: %w", l.Link, err)
		}
		if explicit[p] {
			return nil, fmt.Errorf("image path /%s is given twice", p)
		}
		explicit[p] = true
		if err := t.put(p, entry{kind: kindSymlink, perm: 0o777, linkname: l.Target}); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// addBaseDir copies a host directory tree onto the image root.
func (t tree) addBaseDir(root string) error {
	return filepath.WalkDir(root, func(hostPath string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, hostPath)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		p := filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		var e entry
		switch {
		case d.IsDir():
			e = entry{kind: kindDir, perm: modeToPerm(info.Mode())}
		case info.Mode().IsRegular():
			e = entry{kind: kindFile, perm: modeToPerm(info.Mode()), source: hostPath}
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(hostPath)
			if err != nil {
				return err
			}
			e = entry{kind: kindSymlink, perm: 0o777, linkname: target}
		default:
			return fmt.Errorf("%s: unsupported file type %s", hostPath, info.Mode().Type())
		}
		return t.put(p, e)
	})
}

// put records an entry and the directories above it. A file or symlink already at p is
// replaced (later base dirs and explicit files win) and a directory takes the later
// permission bits, but nothing changes between directory and non-directory.
func (t tree) put(p string, e entry) error {
	if err := t.ensureParents(p); err != nil {
		return err
	}
	if old, ok := t[p]; ok {
		switch {
		case old.kind == kindDir && e.kind == kindDir:
		case old.kind == kindDir:
			return fmt.Errorf("image path /%s: a directory is already there, cannot add a %s", p, e.kind)
		case e.kind == kindDir:
			return fmt.Errorf("image path /%s: a %s is already there, cannot add a directory", p, old.kind)
		}
	}
	t[p] = e
	return nil
}

// ensureParents creates missing 0755 directories above p, refusing to descend through
// something that is not a directory.
func (t tree) ensureParents(p string) error {
	for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
		old, ok := t[dir]
		if !ok {
			t[dir] = entry{kind: kindDir, perm: 0o755}
			continue
		}
		if old.kind != kindDir {
			return fmt.Errorf("image path /%s: parent /%s is a %s", p, dir, old.kind)
		}
	}
	return nil
}

// sortedPaths returns the tree's paths with every directory directly followed by its
// contents, so extractors always meet a parent before its children.
func (t tree) sortedPaths() []string {
	paths := make([]string, 0, len(t))
	for p := range t {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool { return lessPath(paths[i], paths[j]) })
	return paths
}

// lessPath orders paths component by component, so "a/b" (inside a) sorts before "a-b"
// and every directory's contents follow it directly.
func lessPath(a, b string) bool {
	return strings.ReplaceAll(a, "/", "\x00") < strings.ReplaceAll(b, "/", "\x00")
}
