// Package supervisor runs a long-lived program (containerd, later the kubelet) as a
// detached, supervised process where there is no systemd: `triremeadm supervise`
// runs in its own session, restarts the program when it exits, appends its output
// to a log file under /var/log/trireme/, and records its own PID in a PID file, so
// that `triremeadm reset` stops exactly that process — by PID, never by name.
package supervisor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Marker is an argument every supervisor process carries, so that Stop can tell a
// recorded PID still belongs to a supervisor before signalling it.
const Marker = "supervise"

// Spec is a program to supervise.
type Spec struct {
	// Name names the PID and log files.
	Name string
	// PIDFile records the supervisor's PID.
	PIDFile string
	// LogFile receives the supervisor's and the program's output.
	LogFile string
	// Command is the program and its arguments.
	Command []string
}

// Start launches `self supervise ...` for spec, detached in its own session, and
// waits until it has recorded its PID. It returns that PID. A supervisor already
// running for spec.PIDFile is an error.
func Start(self string, spec Spec, wait time.Duration) (int, error) {
	if pid, ok := Running(spec.PIDFile); ok {
		return 0, fmt.Errorf("%s is already supervised by PID %d (%s)", spec.Name, pid, spec.PIDFile)
	}
	for _, d := range []string{filepath.Dir(spec.PIDFile), filepath.Dir(spec.LogFile)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return 0, err
		}
	}
	log, err := os.OpenFile(spec.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return 0, err
	}
	defer log.Close()
	args := append([]string{Marker, "--name", spec.Name, "--pid-file", spec.PIDFile, "--"}, spec.Command...)
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start supervisor for %s: %w", spec.Name, err)
	}
	pid := cmd.Process.Pid
	// The supervisor outlives us; reap it if it exits while we still run.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if got, err := ReadPID(spec.PIDFile); err == nil && got == pid {
			return pid, nil
		}
		select {
		case err := <-exited:
			return 0, fmt.Errorf("supervisor for %s exited: %v (see %s)", spec.Name, err, spec.LogFile)
		case <-time.After(20 * time.Millisecond):
		}
	}
	return 0, fmt.Errorf("supervisor for %s did not record its PID in %s within %s", spec.Name, spec.PIDFile, wait)
}

// ReadPID reads a PID file.
func ReadPID(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 1 {
		return 0, fmt.Errorf("%s: bad PID %q", path, strings.TrimSpace(string(data)))
	}
	return pid, nil
}

// Running returns the PID recorded in pidFile when that process is alive and is a
// supervisor for that same PID file.
func Running(pidFile string) (int, bool) {
	pid, _, ok := supervised(pidFile)
	return pid, ok
}

// Command returns the program and arguments that the supervisor recorded in
// pidFile runs: what a restart keeps when it replaces the program's binary.
func Command(pidFile string) ([]string, error) {
	_, command, ok := supervised(pidFile)
	if !ok {
		return nil, fmt.Errorf("no supervisor runs for %s", pidFile)
	}
	if len(command) == 0 {
		return nil, fmt.Errorf("the supervisor for %s names no command", pidFile)
	}
	return command, nil
}

// supervised reads the command line of the process recorded in pidFile: its
// PID and supervised command when it is a supervisor for that PID file.
func supervised(pidFile string) (int, []string, bool) {
	pid, err := ReadPID(pidFile)
	if err != nil {
		return 0, nil, false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return 0, nil, false
	}
	args := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
	marker := slices.Index(args, Marker)
	if marker < 0 {
		return 0, nil, false
	}
	ours := false
	for i := marker + 1; i < len(args); i++ {
		switch {
		case args[i] == "--pid-file" && i+1 < len(args):
			ours = args[i+1] == pidFile
		case args[i] == "--":
			if !ours {
				return 0, nil, false
			}
			return pid, args[i+1:], true
		}
	}
	return 0, nil, false
}

// Stop stops the supervisor recorded in pidFile (and with it the program): SIGTERM,
// then SIGKILL to its process group after timeout. A missing or stale PID file is
// not an error; the file is removed either way.
func Stop(pidFile string, timeout time.Duration) (bool, error) {
	pid, ok := Running(pidFile)
	if !ok {
		if err := os.Remove(pidFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, err
		}
		return false, nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return false, fmt.Errorf("signal PID %d: %w", pid, err)
	}
	if !waitGone(pid, timeout) {
		// The supervisor leads its session and process group; the program is in its
		// own group, recorded next to the supervisor's PID file.
		if child, err := ReadPID(pidFile + ".child"); err == nil {
			_ = syscall.Kill(-child, syscall.SIGKILL)
		}
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		if !waitGone(pid, 5*time.Second) {
			return true, fmt.Errorf("PID %d did not exit after SIGKILL", pid)
		}
	}
	_ = os.Remove(pidFile + ".child")
	if err := os.Remove(pidFile); err != nil && !errors.Is(err, os.ErrNotExist) {
		return true, err
	}
	return true, nil
}

// Gone reports whether process pid has exited (a zombie not yet reaped by its parent
// counts as exited).
func Gone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err != nil || isZombie(data)
}

func waitGone(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		if Gone(pid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func isZombie(stat []byte) bool {
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// Run is the supervisor itself (`triremeadm supervise`): it records its PID, runs
// command, restarts it with back-off when it exits, and on SIGTERM or SIGINT stops
// it (SIGTERM, SIGKILL after stopTimeout) and removes the PID file.
func Run(name, pidFile string, command []string, out io.Writer, stopTimeout time.Duration) error {
	if len(command) == 0 {
		return errors.New("no command to supervise")
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return err
	}
	defer os.Remove(pidFile)
	defer os.Remove(pidFile + ".child")
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	backoff := time.Second
	for {
		cmd := exec.Command(command[0], command[1:]...)
		cmd.Stdout, cmd.Stderr = out, out
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		started := time.Now()
		fmt.Fprintf(out, "%s supervisor: starting %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(command, " "))
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(out, "%s supervisor: start %s: %v\n", time.Now().UTC().Format(time.RFC3339), name, err)
		} else {
			_ = os.WriteFile(pidFile+".child", []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case sig := <-sigs:
				fmt.Fprintf(out, "%s supervisor: %v: stopping %s (PID %d)\n", time.Now().UTC().Format(time.RFC3339), sig, name, cmd.Process.Pid)
				_ = cmd.Process.Signal(syscall.SIGTERM)
				select {
				case <-done:
				case <-time.After(stopTimeout):
					_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
					<-done
				}
				return nil
			case err := <-done:
				fmt.Fprintf(out, "%s supervisor: %s exited: %v\n", time.Now().UTC().Format(time.RFC3339), name, err)
			}
		}
		if time.Since(started) > time.Minute {
			backoff = time.Second
		}
		select {
		case <-sigs:
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}
