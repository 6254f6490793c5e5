// Package scheduler_test runs the real trireme-scheduler binary against the
// real apiserver and controller-manager. Nodes are API objects with
// capacity that the suite marks Ready itself (no kubelet runs); each test
// creates its own nodes and removes them, so failure messages count only
// them.
package scheduler_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"trireme.dev/componentbase/freeport"
	"trireme.dev/componentbase/testcluster"
)

var (
	srv       *testcluster.APIServer
	schedPort int
	schedLog  = &testcluster.LogBuffer{}
)

// config has a second profile that scores by MostAllocated, so tests can
// tell the profiles apart by where pods land.
const config = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  qps: 500
  burst: 1000
profiles:
- schedulerName: default-scheduler
- schedulerName: second-scheduler
  plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
`

func TestMain(m *testing.M) { os.Exit(runSuite(m)) }

func runSuite(m *testing.M) int {
	ctx := context.Background()
	s, err := testcluster.LaunchAPIServer(ctx, testcluster.APIServerOptions{ControllerManager: true})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e/scheduler: %v\n", err)
		return 1
	}
	srv = s
	defer func() {
		if err := s.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e/scheduler: %v\n", err)
		}
	}()
	proc, err := startScheduler(s)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e/scheduler: %v\n", err)
		return 1
	}
	code := m.Run()
	if err := proc.Stop(testcluster.DefaultStopTimeout); err != nil {
		fmt.Fprintf(os.Stderr, "e2e/scheduler: stop scheduler: %v\n", err)
		code = max(code, 1)
	}
	// SIGTERM is a clean shutdown: anything but exit 0 (a race report under
	// -race, a panic) fails the suite.
	if err := proc.ExitError(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e/scheduler: scheduler exited with %v\n", err)
		code = max(code, 1)
	}
	if code != 0 {
		fmt.Fprintf(os.Stderr, "trireme-scheduler log (last lines):\n%s\n", schedLog.Tail(80))
		fmt.Fprintf(os.Stderr, "trireme-apiserver log (last lines):\n%s\n", s.LogTail(50))
	}
	return code
}

func startScheduler(s *testcluster.APIServer) (*testcluster.Process, error) {
	bin, err := testcluster.Binary("trireme-scheduler")
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(s.DataDir(), "scheduler-config.yaml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		return nil, err
	}
	schedPort, err = freeport.Get()
	if err != nil {
		return nil, err
	}
	proc, err := testcluster.StartProcess(bin, []string{
		"--config", cfgPath,
		"--kubeconfig", s.KubeconfigPath(),
		"--secure-port", strconv.Itoa(schedPort),
		// As kubeadm runs it: the secure port delegates to the apiserver.
		"--authentication-kubeconfig", s.KubeconfigPath(),
		"--authorization-kubeconfig", s.KubeconfigPath(),
		"--bind-address", "127.0.0.1",
		"--leader-elect-lease-duration", "4s",
		"--leader-elect-renew-deadline", "3s",
		"--leader-elect-retry-period", "500ms",
		"-v", "2",
	}, schedLog)
	if err != nil {
		return nil, err
	}
	return proc, nil
}
