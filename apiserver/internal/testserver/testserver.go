// Package testserver runs a complete trireme-apiserver inside the test
// process: embedded etcd in a temporary data dir, dev-mode certificates,
// every served group and the bootstrap hooks, serving on a free loopback
// port. It is the in-process depth of testcluster.Cluster: a test body
// written against that interface runs here and against the built binary
// (testcluster.APIServer) alike.
package testserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"github.com/spf13/pflag"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"trireme.dev/apiserver/internal/server"
	"trireme.dev/componentbase/testcluster"
)

// readyTimeout bounds how long Start waits for /readyz; a cold start with
// etcd and every post-start hook takes a few seconds on a busy machine.
const readyTimeout = 2 * time.Minute

// Options change how the server starts. The zero value is a quiet server
// in a fresh temporary directory.
type Options struct {
	// DataDir is the directory of etcd, certificates and admin.kubeconfig.
	// Empty: a new temporary directory that Close removes. A given directory
	// is kept, so a later Start on it finds the same cluster.
	DataDir string
	// Verbose sends the server's and klog's logs to stderr; otherwise they
	// are discarded. Pass testing.Verbose() to follow `go test -v`.
	Verbose bool
	// Args are trireme-apiserver flags, as on its command line (for
	// example --service-cluster-ip-range=10.97.0.0/28): the same list
	// testcluster.APIServerOptions.ExtraArgs gives the binary, so one test
	// asks for one server at either depth. The data dir and the serving
	// address and port are the harness's and override these.
	Args []string
}

// Server is a running apiserver.
type Server struct {
	// DataDir is where the cluster's state lives.
	DataDir string
	// EtcdEndpoints are the client URLs of the embedded etcd.
	EtcdEndpoints []string

	opts    Options
	ownsDir bool
	port    int
	run     *run
	config  *rest.Config
}

var _ testcluster.Cluster = (*Server)(nil)

// run is one start of the server on the data dir.
type run struct {
	cancel  context.CancelFunc
	done    chan struct{}
	err     error // what RunWithContext returned; read after done closes
	cleanup func()
	once    sync.Once
	stopErr error
}

// Start runs a server and returns once /readyz answers ok.
func Start(ctx context.Context, opts Options) (*Server, error) {
	s := &Server{opts: opts, DataDir: opts.DataDir}
	if s.DataDir == "" {
		dir, err := os.MkdirTemp("", "trireme-apiserver-")
		if err != nil {
			return nil, fmt.Errorf("create data dir: %w", err)
		}
		s.DataDir, s.ownsDir = dir, true
	}
	if err := s.start(ctx); err != nil {
		if s.ownsDir {
			_ = os.RemoveAll(s.DataDir)
		}
		return nil, err
	}
	return s, nil
}

// start runs the server on s.DataDir, on s.port when a previous run chose one.
func (s *Server) start(ctx context.Context) error {
	zl := zap.NewNop()
	if s.opts.Verbose {
		cfg := zap.NewDevelopmentConfig()
		cfg.DisableStacktrace = true
		var err error
		if zl, err = cfg.Build(); err != nil {
			return fmt.Errorf("build logger: %w", err)
		}
	}
	log := zapr.NewLogger(zl)
	if s.opts.Verbose {
		klog.SetLogger(log)
	} else {
		// Libraries log through klog's global logger; silence it for the process.
		klog.SetLogger(logr.Discard())
	}

	o := server.NewOptions()
	fs := pflag.NewFlagSet("trireme-apiserver", pflag.ContinueOnError)
	fs.SetOutput(io.Discard) // the returned error says it all; usage is noise
	o.AddFlags(fs)
	if err := fs.Parse(s.opts.Args); err != nil {
		return fmt.Errorf("apiserver flags %q: %w", s.opts.Args, err)
	}
	// The first start binds port 0 and keeps the listener, so no other
	// process can take the port between choosing and serving; a restart
	// binds the port chosen then, so clients keep their address.
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", fmt.Sprint(s.port)))
	if err != nil {
		return fmt.Errorf("listen on 127.0.0.1:%d: %w", s.port, err)
	}
	s.port = l.Addr().(*net.TCPAddr).Port
	o.DataDir = s.DataDir
	o.SecureServing.BindAddress = net.IPv4(127, 0, 0, 1)
	o.SecureServing.BindPort = s.port
	o.SecureServing.Listener = l

	runCtx, cancel := context.WithCancel(logr.NewContext(context.WithoutCancel(ctx), log))
	srv, cleanup, err := server.New(runCtx, o, zl)
	if err != nil {
		cancel()
		_ = l.Close()
		if cleanup != nil {
			cleanup()
		}
		return fmt.Errorf("build apiserver: %w", err)
	}
	r := &run{cancel: cancel, cleanup: cleanup, done: make(chan struct{})}
	s.run = r
	s.EtcdEndpoints = append([]string(nil), o.Etcd.StorageConfig.Transport.ServerList...)
	go func() {
		defer close(r.done)
		r.err = srv.Run(runCtx)
	}()

	cfg, err := clientcmd.BuildConfigFromFlags("", s.KubeconfigPath())
	if err != nil {
		_ = s.stop(false)
		return fmt.Errorf("read admin kubeconfig: %w", err)
	}
	// Tests are not throttled on the client side.
	cfg.QPS, cfg.Burst = -1, 0
	s.config = cfg
	if err := s.waitReady(ctx); err != nil {
		// A post-start hook still retrying when the server stops fails, and
		// the generic server exits the process on a failed hook (klog.Fatal):
		// say why the start failed before stopping, or nobody will know.
		fmt.Fprintf(os.Stderr, "testserver: %v\n", err)
		_ = s.stop(false)
		return err
	}
	return nil
}

// waitReady polls /readyz until it answers ok or the server stops.
func (s *Server) waitReady(ctx context.Context) error {
	client, err := kubernetes.NewForConfig(s.config)
	if err != nil {
		return fmt.Errorf("client for readiness: %w", err)
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, readyTimeout, true, func(ctx context.Context) (bool, error) {
		select {
		case <-s.run.done:
			return false, fmt.Errorf("apiserver exited before ready: %v", s.run.err)
		default:
		}
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").Param("verbose", "1").DoRaw(ctx)
		if err != nil {
			last = fmt.Errorf("%w %s", err, failedChecks(body))
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("apiserver not ready: %w (last answer: %v)", err, last)
	}
	return nil
}

// failedChecks keeps the failing lines ("[-]poststarthook/x failed") of a
// verbose /readyz answer.
func failedChecks(body []byte) string {
	var failed []string
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "[-]") {
			failed = append(failed, line)
		}
	}
	return strings.Join(failed, "; ")
}

// Config reaches the server as the admin user (admin.kubeconfig), with
// client-side rate limits lifted so tests are not throttled. Each call
// returns a copy the caller may modify.
func (s *Server) Config() *rest.Config { return rest.CopyConfig(s.config) }

// KubeconfigPath is the admin kubeconfig the server writes into its data
// dir, for kubectl.
func (s *Server) KubeconfigPath() string { return filepath.Join(s.DataDir, "admin.kubeconfig") }

// Restart stops the server, keeping its data dir, and starts it again on
// the same dir and port, so Config and clients built from it keep working.
func (s *Server) Restart(ctx context.Context) error {
	if err := s.stop(false); err != nil {
		return fmt.Errorf("stop for restart: %w", err)
	}
	return s.start(ctx)
}

// Close shuts the server down and waits for it, stops etcd, and removes the
// data dir when Start created it. It is safe to call more than once.
func (s *Server) Close() error {
	return s.stop(s.ownsDir)
}

func (s *Server) stop(removeDir bool) error {
	var err error
	if s.run != nil {
		err = s.run.stop()
	}
	if removeDir {
		if rmErr := os.RemoveAll(s.DataDir); rmErr != nil && err == nil {
			err = fmt.Errorf("remove data dir: %w", rmErr)
		}
	}
	return err
}

// stop cancels the run, waits for the server to return and then stops
// etcd; stopping etcd first would leave the server retrying against it.
func (r *run) stop() error {
	r.once.Do(func() {
		r.cancel()
		select {
		case <-r.done:
		case <-time.After(time.Minute):
			r.stopErr = errors.New("apiserver did not stop within a minute")
			return
		}
		r.cleanup()
		if r.err != nil && !errors.Is(r.err, context.Canceled) {
			r.stopErr = fmt.Errorf("apiserver: %w", r.err)
		}
	})
	return r.stopErr
}
