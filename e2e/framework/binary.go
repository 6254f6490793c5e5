package framework

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
	return filepath.Join(repoRoot(), "_output", "bin")
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

// repoRoot is two levels above this file (e2e/framework): the tests run
// from their own package directories, so the working directory cannot be
// trusted to find _output.
func repoRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "."
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}
