package testcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// BinDirEnv names the environment variable that overrides where Trireme
// binaries are looked up.
const BinDirEnv = "TRIREME_BIN_DIR"

// BinDir returns the directory holding Trireme binaries: $TRIREME_BIN_DIR if
// set, otherwise _output/bin at the root of the repository this package was
// compiled from.
func BinDir() string {
	if dir := os.Getenv(BinDirEnv); dir != "" {
		return dir
	}
	return filepath.Join(RepoRoot(), "_output", "bin")
}

// ImageDir returns the directory holding the image archives `make images`
// writes (docker-archives named NAME.tar): _output/images beside BinDir.
func ImageDir() string { return filepath.Join(filepath.Dir(BinDir()), "images") }

// ImageArchives returns the paths of the named images' archives in dir
// (ImageDir, or another build's).
func ImageArchives(dir string, names ...string) []string {
	paths := make([]string, 0, len(names))
	for _, n := range names {
		paths = append(paths, filepath.Join(dir, n+".tar"))
	}
	return paths
}

// Binary returns the path of the named Trireme binary, or an error telling
// the reader to run `make build` when it is not there.
func Binary(name string) (string, error) {
	path := filepath.Join(BinDir(), name)
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("%s not found at %s: run `make build` first (or set %s to the directory holding it)", name, path, BinDirEnv)
	case err != nil:
		return "", fmt.Errorf("stat %s: %w", path, err)
	case info.IsDir() || info.Mode()&0o111 == 0:
		return "", fmt.Errorf("%s is not an executable file: run `make build` again", path)
	}
	return path, nil
}

// RepoRoot returns the root of the repository this package was compiled
// from, where _output lies: two levels above this file
// (componentbase/testcluster). Tests run from their own package
// directories, so the working directory alone does not locate it. Under
// -trimpath the file name is not a path on disk, and the nearest directory
// above the working directory holding go.work is used instead.
func RepoRoot() string {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	}
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d
		}
		if d == filepath.Dir(d) {
			return dir
		}
	}
}
