package apiserver_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"trireme.dev/componentbase/testcluster"
)

// Service ranges the shared server runs with; the tests check allocations
// against them.
const (
	serviceCIDR     = "10.96.0.0/12"
	nodePortRange   = "30000-32767"
	kubernetesSvcIP = "10.96.0.1"
)

// srv is the server most tests share: starting one per test would make the
// suite several times slower without testing anything more. Tests keep to
// namespaces of their own so they stay independent.
var srv *testcluster.APIServer

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	if _, err := testcluster.KubectlPath(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e/apiserver: %v\n", err)
		return 1
	}
	s, err := testcluster.LaunchAPIServer(context.Background(), serverOptions())
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e/apiserver: %v\n", err)
		return 1
	}
	srv = s
	code := m.Run()
	// The controllers run as their own service accounts: a request their
	// roles do not allow is a gap in the bootstrap policy.
	if lines := s.ControllerManagerForbidden(); len(lines) > 0 {
		fmt.Fprintf(os.Stderr, "e2e/apiserver: controllers were refused by RBAC:\n%s\n", strings.Join(lines, "\n"))
		code = max(code, 1)
	}
	if code != 0 {
		fmt.Fprintf(os.Stderr, "trireme-apiserver log (last lines):\n%s\n", s.LogTail(200))
	}
	if err := s.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e/apiserver: %v\n", err)
		code = max(code, 1)
	}
	return code
}

func serverOptions() testcluster.APIServerOptions {
	return testcluster.APIServerOptions{ServiceClusterIPRange: serviceCIDR, ServiceNodePortRange: nodePortRange, ControllerManager: true}
}
