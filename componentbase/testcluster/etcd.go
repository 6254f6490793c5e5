package testcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"trireme.dev/componentbase/freeport"
)

// EtcdBinary is the file name `make build` gives etcd.
const EtcdBinary = "etcd"

// StoragePrefix is the apiserver's --etcd-prefix (upstream's default): an
// object lives at <StoragePrefix>/<resource>/<namespace>/<name>, except for
// the few resources upstream keeps under historic paths (services/specs,
// minions, controllers, ...).
const StoragePrefix = "/registry"

// etcdServer is a single-member etcd process on loopback, for a server run
// with APIServerOptions.ExternalEtcd.
type etcdServer struct {
	proc     *Process
	endpoint string // http://127.0.0.1:<port>
}

// startEtcd runs the etcd binary with its data in dir and waits until it
// answers /health. Output goes to out, at warning level: etcd's info lines
// would crowd the apiserver's out of the log tail.
func startEtcd(ctx context.Context, dir string, out *TailBuffer) (*etcdServer, error) {
	binary, err := Binary(EtcdBinary)
	if err != nil {
		return nil, err
	}
	var last error
	// As for the apiserver: a free port can be taken before etcd binds it.
	for range 3 {
		clientPort, err := freeport.Get()
		if err != nil {
			return nil, err
		}
		peerPort, err := freeport.Get()
		if err != nil {
			return nil, err
		}
		client := "http://127.0.0.1:" + strconv.Itoa(clientPort)
		peer := "http://127.0.0.1:" + strconv.Itoa(peerPort)
		args := []string{
			"--name", "e2e", "--data-dir", filepath.Join(dir, "etcd"),
			"--listen-client-urls", client, "--advertise-client-urls", client,
			"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
			"--initial-cluster", "e2e=" + peer,
			"--log-level", "warn",
			// Test data outlives nothing: fsync would only make every
			// write wait for a disk the whole machine shares.
			"--unsafe-no-fsync",
		}
		start := fmt.Sprintf("=== start %s %s\n", binary, strings.Join(args, " "))
		fmt.Fprint(out, start)
		proc, err := StartProcess(binary, args, out)
		if err != nil {
			return nil, err
		}
		e := &etcdServer{proc: proc, endpoint: client}
		if last = e.waitHealthy(ctx, DefaultReadyTimeout); last == nil {
			return e, nil
		}
		if err := e.stop(); err != nil {
			last = errors.Join(last, err)
		}
		tail := out.String()
		if i := strings.LastIndex(tail, start); i < 0 || !strings.Contains(tail[i:], "address already in use") {
			break
		}
	}
	return nil, last
}

// waitHealthy polls etcd's /health until it reports healthy, the process
// exits, or timeout passes.
func (e *etcdServer) waitHealthy(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if last = e.probe(ctx); last == nil {
			return nil
		}
		select {
		case <-e.proc.Exited():
			return fmt.Errorf("etcd (pid %d) exited before it was healthy: %v", e.proc.PID(), e.proc.ExitError())
		case <-ctx.Done():
			return fmt.Errorf("etcd (pid %d) not healthy after %s: %w", e.proc.PID(), timeout, last)
		case <-tick.C:
		}
	}
}

func (e *etcdServer) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.endpoint+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"health":"true"`) {
		return fmt.Errorf("GET %s/health: %s %s", e.endpoint, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// stop stops etcd by PID; an exit it did not ask for is reported.
func (e *etcdServer) stop() error {
	select {
	case <-e.proc.Exited():
		return fmt.Errorf("etcd (pid %d) had already exited on its own: %v", e.proc.PID(), e.proc.ExitError())
	default:
	}
	if err := e.proc.Stop(DefaultStopTimeout); err != nil {
		return fmt.Errorf("stop etcd: %w", err)
	}
	return nil
}

// Etcd is a single-member etcd process on loopback that a caller runs
// beside a control plane of its own making (the scale harness puts
// Trireme's and upstream's apiservers on the same build of etcd).
type Etcd struct{ e *etcdServer }

// StartEtcd runs the etcd binary `make build` writes, with its data under
// dir and its warning-level output in out, and waits until it answers
// /health. The caller stops it with Stop; dir is the caller's to remove.
func StartEtcd(ctx context.Context, dir string, out *TailBuffer) (*Etcd, error) {
	e, err := startEtcd(ctx, dir, out)
	if err != nil {
		return nil, err
	}
	return &Etcd{e: e}, nil
}

// Endpoint is etcd's client URL, http://127.0.0.1:<port>.
func (e *Etcd) Endpoint() string { return e.e.endpoint }

// PID is the etcd process's id.
func (e *Etcd) PID() int { return e.e.proc.PID() }

// Stop stops etcd by PID.
func (e *Etcd) Stop() error { return e.e.stop() }
