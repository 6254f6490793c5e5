// Package testbin is for triremeadm's tests: it finds the built Trireme binaries
// (`make build` writes them to _output/bin), builds triremeadm itself, runs
// processes in their own process groups and stops them by PID.
package testbin

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// BinDirEnv overrides where the Trireme binaries are looked up.
const BinDirEnv = "TRIREME_BIN_DIR"

// RepoRoot is the nearest directory above the working directory holding go.work.
func RepoRoot() string {
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d
		}
		if d == filepath.Dir(d) {
			return dir
		}
	}
}

// Binary returns the path of a built Trireme binary, or an error naming the command
// that builds it.
func Binary(name string) (string, error) {
	dir := os.Getenv(BinDirEnv)
	if dir == "" {
		dir = filepath.Join(RepoRoot(), "_output", "bin")
	}
	path := filepath.Join(dir, name)
	if st, err := os.Stat(path); err != nil || st.IsDir() {
		return "", fmt.Errorf("%s not found at %s: run `make build` first (or set %s)", name, path, BinDirEnv)
	}
	return path, nil
}

// BuildTriremeadm compiles triremeadm into dir and returns its path.
func BuildTriremeadm(dir string) (string, error) {
	out := filepath.Join(dir, "triremeadm")
	cmd := exec.Command("go", "build", "-o", out, "trireme.dev/adm/cmd/triremeadm")
	cmd.Dir = RepoRoot()
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build triremeadm: %w: %s", err, b)
	}
	return out, nil
}

// Process is a started child process.
type Process struct {
	Cmd  *exec.Cmd
	done chan struct{}
}

// Start runs binary with args in its own process group, output to out, and stops it
// by PID when the test ends.
func Start(t testing.TB, out io.Writer, binary string, args ...string) *Process {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 2 * time.Second
	// Pdeathsig follows the forking thread; keep it alive for the child's life.
	runtime.LockOSThread()
	err := cmd.Start()
	runtime.UnlockOSThread()
	if err != nil {
		t.Fatalf("start %s: %v", binary, err)
	}
	p := &Process{Cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.Stop(10 * time.Second) })
	return p
}

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.done }

// Stop sends SIGTERM to the process group, then SIGKILL after timeout.
func (p *Process) Stop(timeout time.Duration) {
	pid := p.Cmd.Process.Pid
	if err := syscall.Kill(-pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return
	}
	select {
	case <-p.done:
	case <-time.After(timeout):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-p.done
	}
}
