package controllermanager_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"trireme.dev/componentbase/testcluster"
)

// srv is the apiserver and controller-manager the tests share; each test
// keeps to namespaces of its own.
var srv *testcluster.APIServer

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	if _, err := testcluster.KubectlPath(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e/controllermanager: %v\n", err)
		return 1
	}
	// etcd runs apart from the apiserver, as in a cluster, so that tests of
	// bad stored objects can write them behind the apiserver's back.
	s, err := testcluster.LaunchAPIServer(context.Background(), testcluster.APIServerOptions{ControllerManager: true, ExternalEtcd: true})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e/controllermanager: %v\n", err)
		return 1
	}
	srv = s
	code := m.Run()
	// Every controller runs as its own service account: a request its role
	// does not allow is a gap in the bootstrap policy or a controller
	// using the wrong client, even when a retry hid it from the tests.
	if lines := s.ControllerManagerForbidden(); len(lines) > 0 {
		fmt.Fprintf(os.Stderr, "e2e/controllermanager: controllers were refused by RBAC:\n%s\n", strings.Join(lines, "\n"))
		code = max(code, 1)
	}
	// Bad objects are logged and given an Event, never a crash.
	if lines := s.ControllerManagerPanics(); len(lines) > 0 {
		fmt.Fprintf(os.Stderr, "e2e/controllermanager: the controller-manager panicked:\n%s\n", strings.Join(lines, "\n"))
		code = max(code, 1)
	}
	if err := s.ControllerManagerExited(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e/controllermanager: %v\n", err)
		code = max(code, 1)
	}
	if code != 0 {
		fmt.Fprintf(os.Stderr, "apiserver and controller-manager log (last lines):\n%s\n", s.LogTail(300))
	}
	if err := s.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e/controllermanager: %v\n", err)
		code = max(code, 1)
	}
	return code
}
