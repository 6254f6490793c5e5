package reset

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"trireme.dev/adm/internal/supervisor"
)

// StopShims stops the containerd shims left serving the containerd at socket
// once it has stopped: a shim outlives its containerd by design, and one whose
// tasks went without a delete from containerd would otherwise stay for good,
// holding its bundle below the state directory reset removes. A shim is
// this containerd's when its -address argument is socket, so the shims of
// another containerd on the machine (another node's root) are left alone.
// While a containerd still serves socket (one reset did not start, such as
// a system service), its shims are its own and stay.
// SIGTERM, then SIGKILL after timeout; it returns the PIDs it stopped.
func StopShims(socket string, timeout time.Duration) ([]int, error) {
	if c, err := net.DialTimeout("unix", socket, time.Second); err == nil {
		c.Close()
		return nil, nil
	}
	pids, err := shimsOf("/proc", socket)
	if err != nil {
		return nil, err
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return nil, fmt.Errorf("signal containerd shim PID %d: %w", pid, err)
		}
	}
	var errs []error
	deadline := time.Now().Add(timeout)
	for _, pid := range pids {
		for !supervisor.Gone(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if supervisor.Gone(pid) {
			continue
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("kill containerd shim PID %d: %w", pid, err))
		}
	}
	return pids, errors.Join(errs...)
}

// shimsOf lists the PIDs below proc whose command line is a containerd shim's
// (containerd-shim*) with -address socket.
func shimsOf(proc, socket string) ([]int, error) {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		// A process that exits meanwhile has no command line to read.
		cmdline, err := os.ReadFile(filepath.Join(proc, e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if isShimOf(strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00"), socket) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// isShimOf reports whether args, a command line, is a containerd shim's
// serving the containerd at socket.
func isShimOf(args []string, socket string) bool {
	if len(args) == 0 || !strings.HasPrefix(filepath.Base(args[0]), "containerd-shim") {
		return false
	}
	for i, a := range args {
		if (a == "-address" || a == "--address") && i+1 < len(args) {
			return args[i+1] == socket
		}
		if v, ok := strings.CutPrefix(a, "-address="); ok {
			return v == socket
		}
	}
	return false
}
