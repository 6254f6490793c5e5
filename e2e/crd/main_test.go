package crd_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"trireme.dev/componentbase/testcluster"
)

// srv is the server the suite shares; tests keep to namespaces and API
// groups of their own.
var srv *testcluster.APIServer

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	if _, err := testcluster.KubectlPath(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e/crd: %v\n", err)
		return 1
	}
	s, err := testcluster.LaunchAPIServer(context.Background(), testcluster.APIServerOptions{ControllerManager: true})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e/crd: %v\n", err)
		return 1
	}
	srv = s
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "trireme-apiserver log (last lines):\n%s\n", s.LogTail(200))
	}
	if err := s.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e/crd: %v\n", err)
		code = max(code, 1)
	}
	return code
}
