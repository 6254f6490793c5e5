package testcluster

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// DefaultStopTimeout is how long Stop waits after SIGTERM before SIGKILL.
const DefaultStopTimeout = 20 * time.Second

// Process is a child process started by this package, leader of its own
// process group. It is stopped by PID only: signals go to the group whose id
// is that PID, so helpers it forked stop with it, and nothing here ever
// signals processes it did not start.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has been reaped
	err  error         // Wait's result, valid after done is closed
}

// StartProcess runs binary with args, sending stdout and stderr to out. The
// child is killed with SIGKILL if the test binary dies without stopping it
// (a panic or `go test -timeout`), so no server outlives its suite.
func StartProcess(binary string, args []string, out io.Writer) (*Process, error) {
	cmd := exec.Command(binary, args...)
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// A grandchild holding the output pipe must not keep Wait from returning.
	cmd.WaitDelay = 2 * time.Second
	if err := spawn(cmd); err != nil {
		return nil, fmt.Errorf("start %s: %w", binary, err)
	}
	p := &Process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// PID returns the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.done }

// ExitError returns how the process ended; nil while it still runs or when it
// exited with status 0.
func (p *Process) ExitError() error {
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// Stop sends SIGTERM to the process, waits up to timeout for it to exit and
// then sends SIGKILL. It returns an error only if the process could not be
// reaped; a non-zero exit after SIGTERM is the caller's to judge through
// ExitError.
func (p *Process) Stop(timeout time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(timeout):
	}
	if err := p.Kill(); err != nil {
		return err
	}
	return fmt.Errorf("pid %d ignored SIGTERM for %s and was killed", p.PID(), timeout)
}

// Kill sends SIGKILL to the process group, as a crash or a lost machine ends
// it (no graceful shutdown, no Lease released), and waits for it to exit.
func (p *Process) Kill() error {
	if err := p.signal(syscall.SIGKILL); err != nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("pid %d did not exit after SIGKILL", p.PID())
	}
}

// signal sends sig to the process group led by the process.
func (p *Process) signal(sig syscall.Signal) error {
	err := syscall.Kill(-p.PID(), sig)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("send %v to process group %d: %w", sig, p.PID(), err)
	}
	return nil
}

// spawnRequests feeds the one goroutine that forks children. Pdeathsig fires
// when the forking OS thread exits, not the process, so every fork happens on
// a thread locked for the life of the test binary.
var (
	spawnOnce     sync.Once
	spawnRequests chan spawnRequest
)

type spawnRequest struct {
	cmd    *exec.Cmd
	result chan error
}

func spawn(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawnRequests = make(chan spawnRequest)
		go func() {
			runtime.LockOSThread()
			for req := range spawnRequests {
				req.result <- req.cmd.Start()
			}
		}()
	})
	result := make(chan error, 1)
	spawnRequests <- spawnRequest{cmd: cmd, result: result}
	return <-result
}
