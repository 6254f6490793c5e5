package testcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"trireme.dev/componentbase/freeport"
)

// APIServerBinary is the file name `make build` gives the apiserver.
const APIServerBinary = "trireme-apiserver"

// ControllerManagerBinary is the file name `make build` gives the
// controller-manager.
const ControllerManagerBinary = "trireme-controller-manager"

// DefaultReadyTimeout bounds how long a start or restart waits for /readyz.
const DefaultReadyTimeout = 120 * time.Second

// APIServerOptions tunes a dev-mode apiserver. The zero value is usable.
type APIServerOptions struct {
	// Binary is the trireme-apiserver to run; empty: the one Binary finds.
	Binary string
	// ServiceClusterIPRange is passed as --service-cluster-ip-range when set.
	ServiceClusterIPRange string
	// ServiceNodePortRange is passed as --service-node-port-range when set.
	ServiceNodePortRange string
	// ExtraArgs are appended to the command line.
	ExtraArgs []string
	// ReadyTimeout overrides DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// ControllerManager also runs trireme-controller-manager against the
	// server, as a cluster does: ServiceAccount admission refuses pods
	// until it has made their namespace's default ServiceAccount.
	ControllerManager bool
	// ControllerManagerArgs are appended to the controller-manager's
	// command line.
	ControllerManagerArgs []string
	// ControllerManagerSharedCredentials runs every controller with the
	// controller-manager's own (admin) credentials. By default each
	// controller acts as its own ServiceAccount in kube-system
	// (--use-service-account-credentials, as kubeadm runs it), so the tests
	// hold the controllers to their least-privilege RBAC roles.
	ControllerManagerSharedCredentials bool
	// ExternalEtcd runs the server against an etcd process of its own (the
	// etcd binary `make build` writes), as a cluster and upstream's
	// integration tests do, instead of the embedded one: a test can then
	// read and write storage behind the apiserver's back through
	// EtcdEndpoint, for objects only an older version or a direct write
	// could have stored. etcd lives as long as the server's directory: a
	// Restart keeps it and its data.
	ExternalEtcd bool
}

// APIServer is a dev-mode trireme-apiserver process: embedded etcd, its own
// CA and admin kubeconfig, all under one temporary directory.
type APIServer struct {
	opts    APIServerOptions
	binary  string
	baseDir string // removed by Close; holds the data dir and kubectl's cache
	port    int
	log     *TailBuffer
	proc    *Process
	stopped bool     // proc was stopped, or found dead, by Stop
	cm      *Process // the controller-manager, when opts.ControllerManager
	cmOut   *forbiddenWatch
	etcd    *etcdServer  // when opts.ExternalEtcd
	config  *rest.Config // the admin configuration, read once the server is ready
}

var _ Cluster = (*APIServer)(nil)

// StartAPIServer starts an apiserver and waits until it is ready, failing tb
// if it cannot. The server is stopped by PID and its directory removed in
// tb.Cleanup, whether or not the test passed; on failure the tail of its log
// is logged first.
func StartAPIServer(tb testing.TB, opts APIServerOptions) *APIServer {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := LaunchAPIServer(ctx, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("trireme-apiserver log (last lines):\n%s", s.LogTail(200))
		}
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

// LaunchAPIServer is StartAPIServer for TestMain, where there is no
// testing.TB: it returns an error instead of failing, and the caller must
// call Close. On error nothing is left running or on disk.
func LaunchAPIServer(ctx context.Context, opts APIServerOptions) (*APIServer, error) {
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = DefaultReadyTimeout
	}
	binary := opts.Binary
	if binary == "" {
		var err error
		if binary, err = Binary(APIServerBinary); err != nil {
			return nil, err
		}
	}
	base, err := os.MkdirTemp("", "trireme-e2e-apiserver-")
	if err != nil {
		return nil, fmt.Errorf("make apiserver directory: %w", err)
	}
	s := &APIServer{opts: opts, binary: binary, baseDir: base, log: NewTailBuffer(256 << 10)}
	for _, dir := range []string{s.DataDir(), s.kubectlCacheDir()} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			os.RemoveAll(base)
			return nil, fmt.Errorf("make %s: %w", dir, err)
		}
	}
	if opts.ExternalEtcd {
		if s.etcd, err = startEtcd(ctx, base, s.log); err != nil {
			logs := s.LogTail(100)
			os.RemoveAll(base)
			return nil, fmt.Errorf("%w\netcd log (last lines):\n%s", err, logs)
		}
	}
	// A free port can be taken between FreePort and the server's bind; a
	// few fresh ports make that race harmless.
	for attempt := 1; ; attempt++ {
		if s.port, err = freeport.Get(); err == nil {
			err = s.start(ctx)
		}
		if err == nil {
			return s, nil
		}
		if attempt == 3 || !strings.Contains(s.log.String(), "address already in use") {
			break
		}
	}
	logs := s.LogTail(200)
	if cerr := s.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	return nil, fmt.Errorf("%w\ntrireme-apiserver log (last lines):\n%s", err, logs)
}

// Args returns the command line the server runs with, without the binary.
func (s *APIServer) Args() []string {
	args := []string{
		"--data-dir", s.DataDir(),
		"--secure-port", strconv.Itoa(s.port),
		"--bind-address", "127.0.0.1",
	}
	if s.etcd != nil {
		args = append(args, "--etcd-servers", s.etcd.endpoint, "--etcd-prefix", StoragePrefix)
	}
	if s.opts.ServiceClusterIPRange != "" {
		args = append(args, "--service-cluster-ip-range", s.opts.ServiceClusterIPRange)
	}
	if s.opts.ServiceNodePortRange != "" {
		args = append(args, "--service-node-port-range", s.opts.ServiceNodePortRange)
	}
	return append(args, s.opts.ExtraArgs...)
}

func (s *APIServer) start(ctx context.Context) error {
	fmt.Fprintf(s.log, "=== start %s %s\n", s.binary, strings.Join(s.Args(), " "))
	proc, err := StartProcess(s.binary, s.Args(), s.log)
	if err != nil {
		return err
	}
	s.proc, s.stopped = proc, false
	if err := s.WaitReady(ctx, s.opts.ReadyTimeout); err != nil {
		if serr := s.Stop(); serr != nil {
			err = errors.Join(err, serr)
		}
		return err
	}
	if s.config, err = s.loadConfig(); err != nil {
		return errors.Join(err, s.Stop())
	}
	if s.opts.ControllerManager {
		if err := s.startControllerManager(); err != nil {
			return errors.Join(err, s.Stop())
		}
	}
	return nil
}

// startControllerManager runs the controller-manager with the admin
// kubeconfig; its output joins the server's log.
func (s *APIServer) startControllerManager() error {
	binary, err := Binary(ControllerManagerBinary)
	if err != nil {
		return err
	}
	// The cluster CA signs CSRs, as kubeadm configures it.
	args := []string{"--kubeconfig", s.KubeconfigPath(), "--secure-port=0", "--leader-elect=false",
		"--cluster-signing-cert-file", s.CACertPath(), "--cluster-signing-key-file", s.CAKeyPath()}
	if !s.opts.ControllerManagerSharedCredentials {
		args = append(args, "--use-service-account-credentials")
	}
	args = append(args, s.opts.ControllerManagerArgs...)
	fmt.Fprintf(s.log, "=== start %s %s\n", binary, strings.Join(args, " "))
	s.cmOut = &forbiddenWatch{out: s.log}
	s.cm, err = StartProcess(binary, args, s.cmOut)
	return err
}

// WaitReady polls /readyz with the admin kubeconfig until it answers 200,
// the process exits, or timeout passes.
func (s *APIServer) WaitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if last = s.probeReady(ctx); last == nil {
			return nil
		}
		select {
		case <-s.proc.Exited():
			return fmt.Errorf("trireme-apiserver (pid %d) exited before it was ready: %v", s.proc.PID(), s.proc.ExitError())
		case <-ctx.Done():
			return fmt.Errorf("trireme-apiserver (pid %d) not ready after %s: %w", s.proc.PID(), timeout, last)
		case <-tick.C:
		}
	}
}

func (s *APIServer) probeReady(ctx context.Context) error {
	cfg, err := s.loadConfig()
	if err != nil {
		return err
	}
	cfg.Timeout = 5 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("client for %s: %w", s.KubeconfigPath(), err)
	}
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("GET /readyz: %w (%s)", err, strings.TrimSpace(string(body)))
	}
	return nil
}

// Stop stops the process by PID (SIGTERM, then SIGKILL after
// DefaultStopTimeout) and keeps the data directory, so Restart can reuse it.
func (s *APIServer) Stop() error {
	if s.proc == nil || s.stopped {
		return nil
	}
	s.stopped = true
	if s.cm != nil {
		if err := s.cm.Stop(DefaultStopTimeout); err != nil {
			fmt.Fprintf(s.log, "=== stop controller-manager: %v\n", err)
		}
		s.cm = nil
	}
	select {
	case <-s.proc.Exited():
		// Nothing asked it to stop: a crash is a finding, not a clean stop.
		return fmt.Errorf("trireme-apiserver (pid %d) had already exited on its own: %v", s.proc.PID(), s.proc.ExitError())
	default:
	}
	fmt.Fprintf(s.log, "=== stop pid %d\n", s.proc.PID())
	if err := s.proc.Stop(DefaultStopTimeout); err != nil {
		return fmt.Errorf("stop trireme-apiserver: %w", err)
	}
	return nil
}

// Restart stops the server and starts it again on the same data directory
// and port, then waits until it is ready.
func (s *APIServer) Restart(ctx context.Context) error {
	if err := s.Stop(); err != nil {
		return err
	}
	if err := s.start(ctx); err != nil {
		return fmt.Errorf("restart trireme-apiserver: %w", err)
	}
	return nil
}

// Close stops the server, and its etcd when it has one, and removes its
// directory, data dir included.
func (s *APIServer) Close() error {
	err := s.Stop()
	if s.etcd != nil {
		err = errors.Join(err, s.etcd.stop())
		s.etcd = nil
	}
	if rerr := os.RemoveAll(s.baseDir); rerr != nil {
		err = errors.Join(err, fmt.Errorf("remove %s: %w", s.baseDir, rerr))
	}
	return err
}

// DataDir is the server's --data-dir.
func (s *APIServer) DataDir() string { return filepath.Join(s.baseDir, "data") }

// kubectlCacheDir keeps kubectl's discovery and OpenAPI caches per server,
// so a new binary on a reused port never meets a stale cache in $HOME.
func (s *APIServer) kubectlCacheDir() string { return filepath.Join(s.baseDir, "kubectl-cache") }

// KubeconfigPath is the admin kubeconfig the server writes into its data dir.
func (s *APIServer) KubeconfigPath() string { return filepath.Join(s.DataDir(), "admin.kubeconfig") }

// CACertPath is the dev-mode cluster CA certificate, which also verifies
// client certificates.
func (s *APIServer) CACertPath() string { return filepath.Join(s.DataDir(), "pki", "ca.crt") }

// CAKeyPath is the key of CACertPath.
func (s *APIServer) CAKeyPath() string { return filepath.Join(s.DataDir(), "pki", "ca.key") }

// Port is the server's --secure-port.
func (s *APIServer) Port() int { return s.port }

// PID is the process id of the running server.
func (s *APIServer) PID() int { return s.proc.PID() }

// ControllerManagerForbidden returns the controller-manager's log lines
// (at most 100) that report a request RBAC refused; a suite that runs the
// controllers with their own service accounts fails on any.
func (s *APIServer) ControllerManagerForbidden() []string {
	if s.cmOut == nil {
		return nil
	}
	return s.cmOut.Lines()
}

// ControllerManagerPanics returns the controller-manager's log lines
// (at most 100) that mention a panic: a controller must log a bad object
// and go on, never crash on it.
func (s *APIServer) ControllerManagerPanics() []string {
	if s.cmOut == nil {
		return nil
	}
	return s.cmOut.Panics()
}

// ControllerManagerExited returns why the controller-manager exited when
// it has, nothing having asked it to stop; nil while it runs (or when it
// does not run at all).
func (s *APIServer) ControllerManagerExited() error {
	if s.cm == nil {
		return nil
	}
	select {
	case <-s.cm.Exited():
		return fmt.Errorf("trireme-controller-manager (pid %d) exited: %v", s.cm.PID(), s.cm.ExitError())
	default:
		return nil
	}
}

// EtcdEndpoint is the client URL of the server's etcd when it runs with
// ExternalEtcd, and "" otherwise. Keys are under StoragePrefix.
func (s *APIServer) EtcdEndpoint() string {
	if s.etcd == nil {
		return ""
	}
	return s.etcd.endpoint
}

// ControllerManagerPID is the controller-manager's process ID, or 0 when
// it does not run.
func (s *APIServer) ControllerManagerPID() int {
	if s.cm == nil {
		return 0
	}
	return s.cm.PID()
}

// Logs returns the tail of the server's combined stdout and stderr.
func (s *APIServer) Logs() string { return s.log.String() }

// Config returns the admin client configuration, read from the kubeconfig
// the server wrote once it was ready. Each call returns a copy the caller
// may modify.
func (s *APIServer) Config() *rest.Config { return rest.CopyConfig(s.config) }

// loadConfig reads the admin kubeconfig into a client configuration.
func (s *APIServer) loadConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", s.KubeconfigPath())
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", s.KubeconfigPath(), err)
	}
	// Tests assert on what they asked for; server warnings would otherwise
	// be printed to stderr by client-go's default handler. kubectl still
	// shows them to tests that check for them.
	cfg.WarningHandler = rest.NoWarnings{}
	// Suites issue bursts of requests; client-side throttling would only
	// slow them and log about it.
	cfg.QPS, cfg.Burst = 1000, 2000
	return cfg, nil
}

// Clientset returns a typed client for the server, failing tb on error.
func (s *APIServer) Clientset(tb testing.TB) *kubernetes.Clientset {
	tb.Helper()
	cs, err := kubernetes.NewForConfig(s.Config())
	if err != nil {
		tb.Fatalf("client for %s: %v", s.KubeconfigPath(), err)
	}
	return cs
}

// LogTail returns the last n lines of the server's log.
func (s *APIServer) LogTail(n int) string { return Tail(s.Logs(), n) }

// EtcdPID is the process id of the server's etcd when it runs with
// ExternalEtcd, and 0 otherwise.
func (s *APIServer) EtcdPID() int {
	if s.etcd == nil {
		return 0
	}
	return s.etcd.proc.PID()
}
