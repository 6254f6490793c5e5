package pause

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Run blocks until SIGINT or SIGTERM arrives (returning nil, so the sandbox stops with
// status 0) or ctx ends (returning its error), reaping exited children on every SIGCHLD.
// PID 1 gets no default signal actions from the kernel, so without these handlers the
// runtime's SIGTERM would be ignored and every stop would wait for SIGKILL.
func Run(ctx context.Context) error {
	signals := notify()
	defer signal.Stop(signals)
	// Children may have exited before Notify took effect; their SIGCHLD is gone.
	if _, err := Reap(); err != nil {
		return err
	}
	return wait(ctx, signals, Reap)
}

// notify subscribes to the signals Run handles. The buffer absorbs a burst of SIGCHLD
// while a reap is running; dropped duplicates are harmless since Reap drains them all.
func notify() chan os.Signal {
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	return signals
}

// wait is Run's loop with the signal source and reaper injected for tests.
func wait(ctx context.Context, signals <-chan os.Signal, reap func() (int, error)) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case sig := <-signals:
			if sig != syscall.SIGCHLD {
				return nil
			}
			if _, err := reap(); err != nil {
				return err
			}
		}
	}
}

// Reap collects every child that has already exited and returns how many it collected.
// SIGCHLD is not queued per child, so one signal may stand for several exits: it loops
// until no exited child is left. It must only run in a process that starts no children
// it waits for itself (pause starts none), as it would steal their exit status.
func Reap() (int, error) {
	reaped := 0
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ECHILD):
			return reaped, nil
		case err != nil:
			return reaped, fmt.Errorf("reap children: %w", err)
		case pid <= 0:
			return reaped, nil
		}
		reaped++
	}
}
