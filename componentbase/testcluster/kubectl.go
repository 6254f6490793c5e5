package testcluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// DefaultKubectlTimeout bounds one kubectl run unless KubectlCmd.Timeout is set.
const DefaultKubectlTimeout = 90 * time.Second

// Result is what a finished kubectl run printed and how it exited.
type Result struct {
	Stdout   string
	Stderr   string
	ExitCode int
}

// String formats the result for failure messages.
func (r Result) String() string {
	return fmt.Sprintf("exit code %d\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.Stdout, r.Stderr)
}

// KubectlCmd is one kubectl invocation against a kubeconfig.
type KubectlCmd struct {
	// Kubeconfig is exported as KUBECONFIG.
	Kubeconfig string
	// CacheDir is exported as KUBECACHEDIR when set.
	CacheDir string
	// Args are kubectl's arguments.
	Args []string
	// Stdin is fed to kubectl's standard input.
	Stdin string
	// Env holds extra KEY=VALUE pairs, such as KUBE_EDITOR.
	Env []string
	// Timeout overrides DefaultKubectlTimeout for Run.
	Timeout time.Duration
}

// KubectlPath returns the kubectl found on PATH, or an error saying how to
// get one.
func KubectlPath() (string, error) {
	path, err := exec.LookPath("kubectl")
	if err != nil {
		return "", fmt.Errorf("kubectl not found on PATH (install it with hack/install-deps.sh): %w", err)
	}
	return path, nil
}

func (k KubectlCmd) command(ctx context.Context, tb testing.TB) *exec.Cmd {
	tb.Helper()
	path, err := KubectlPath()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, path, k.Args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+k.Kubeconfig)
	if k.CacheDir != "" {
		cmd.Env = append(cmd.Env, "KUBECACHEDIR="+k.CacheDir)
	}
	cmd.Env = append(cmd.Env, k.Env...)
	cmd.Stdin = strings.NewReader(k.Stdin)
	return cmd
}

// Run runs kubectl to completion. A non-zero exit is reported in the
// Result, not as a failure: tests of bad input expect one. tb fails only when
// kubectl cannot be run or outlives its timeout.
func (k KubectlCmd) Run(tb testing.TB) Result {
	tb.Helper()
	timeout := k.Timeout
	if timeout == 0 {
		timeout = DefaultKubectlTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := k.command(ctx, tb)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		tb.Fatalf("kubectl %s: still running after %s\n%s", strings.Join(k.Args, " "), timeout, res)
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
	case err != nil:
		tb.Fatalf("kubectl %s: %v", strings.Join(k.Args, " "), err)
	}
	return res
}

// RunOK is Run that fails tb unless kubectl exits 0.
func (k KubectlCmd) RunOK(tb testing.TB) Result {
	tb.Helper()
	res := k.Run(tb)
	if res.ExitCode != 0 {
		tb.Fatalf("kubectl %s failed: %s", strings.Join(k.Args, " "), res)
	}
	return res
}

// WantStdout fails tb unless res printed exactly want on stdout.
func WantStdout(tb testing.TB, res Result, want string) {
	tb.Helper()
	if res.Stdout != want {
		tb.Fatalf("stdout = %q, want %q\n%s", res.Stdout, want, res)
	}
}

// WantMatch fails tb unless text matches every regular expression in
// patterns; it reports each pattern that does not match.
func WantMatch(tb testing.TB, text string, patterns ...string) {
	tb.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile(p).MatchString(text) {
			tb.Errorf("output does not match %q:\n%s", p, text)
		}
	}
}

// Kubectl runs kubectl against the server with its admin kubeconfig.
func (s *APIServer) Kubectl(tb testing.TB, args ...string) Result {
	tb.Helper()
	return s.KubectlCmd(args...).Run(tb)
}

// KubectlStdin is Kubectl with stdin fed to kubectl, as for `apply -f -`.
func (s *APIServer) KubectlStdin(tb testing.TB, stdin string, args ...string) Result {
	tb.Helper()
	cmd := s.KubectlCmd(args...)
	cmd.Stdin = stdin
	return cmd.Run(tb)
}

// KubectlCmd returns an invocation against the server for callers that need
// extra environment, a timeout or a background run.
func (s *APIServer) KubectlCmd(args ...string) KubectlCmd {
	return KubectlCmd{Kubeconfig: s.KubeconfigPath(), CacheDir: s.kubectlCacheDir(), Args: args}
}

// KubectlStream is a kubectl running in the background whose stdout is read
// line by line, such as `kubectl get -w`.
type KubectlStream struct {
	proc   *Process
	lines  chan string
	stderr *TailBuffer
	mu     sync.Mutex
	seen   []string
}

// Start runs kubectl in the background. The process is stopped by PID in
// tb.Cleanup if the test has not stopped it.
func (k KubectlCmd) Start(tb testing.TB) *KubectlStream {
	tb.Helper()
	path, err := KubectlPath()
	if err != nil {
		tb.Fatal(err)
	}
	pr, pw := io.Pipe()
	s := &KubectlStream{lines: make(chan string, 1024), stderr: NewTailBuffer(64 << 10)}
	env := append(os.Environ(), "KUBECONFIG="+k.Kubeconfig)
	if k.CacheDir != "" {
		env = append(env, "KUBECACHEDIR="+k.CacheDir)
	}
	cmd := exec.Command(path, k.Args...)
	cmd.Env = append(env, k.Env...)
	cmd.Stdout, cmd.Stderr = pw, s.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = 2 * time.Second
	if err := spawn(cmd); err != nil {
		tb.Fatalf("start kubectl %s: %v", strings.Join(k.Args, " "), err)
	}
	s.proc = &Process{cmd: cmd, done: make(chan struct{})}
	go func() {
		s.proc.err = cmd.Wait()
		pw.Close()
		close(s.proc.done)
	}()
	go func() {
		sc := bufio.NewScanner(pr)
		// Lines nobody waits for are dropped once kubectl has exited, so
		// this goroutine never outlives the test.
		for sc.Scan() {
			select {
			case s.lines <- sc.Text():
			case <-s.proc.done:
			}
		}
		close(s.lines)
	}()
	tb.Cleanup(func() { s.Stop() })
	return s
}

// WaitForLine returns the first line not yet consumed that satisfies match,
// reading for at most timeout. Lines read on the way are kept for Output.
func (s *KubectlStream) WaitForLine(timeout time.Duration, match func(line string) bool) (string, error) {
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				return "", fmt.Errorf("kubectl exited (%v) before printing the expected line; output:\n%s\nstderr:\n%s", s.proc.ExitError(), s.Output(), s.stderr)
			}
			s.mu.Lock()
			s.seen = append(s.seen, line)
			s.mu.Unlock()
			if match(line) {
				return line, nil
			}
		case <-deadline:
			return "", fmt.Errorf("no expected line within %s; output so far:\n%s\nstderr:\n%s", timeout, s.Output(), s.stderr)
		}
	}
}

// Output returns the lines WaitForLine has read so far.
func (s *KubectlStream) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.seen, "\n")
}

// Stop ends kubectl by PID (SIGTERM, then SIGKILL) and returns its stderr.
func (s *KubectlStream) Stop() string {
	_ = s.proc.Stop(5 * time.Second)
	return s.stderr.String()
}

// PID is the process id of the background kubectl.
func (s *KubectlStream) PID() int { return s.proc.PID() }
