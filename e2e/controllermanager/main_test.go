package controllermanager_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"trireme.dev/e2e/framework"
)

// srv is the apiserver and controller-manager the tests share; each test
// keeps to namespaces of its own.
var srv *framework.APIServer

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	if _, err := framework.KubectlPath(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e/controllermanager: %v\n", err)
		return 1
	}
	s, err := framework.LaunchAPIServer(context.Background(), framework.APIServerOptions{ControllerManager: true})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e/controllermanager: %v\n", err)
		return 1
	}
	srv = s
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "apiserver and controller-manager log (last lines):\n%s\n", s.LogTail(300))
	}
	if err := s.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e/controllermanager: %v\n", err)
		code = max(code, 1)
	}
	return code
}
