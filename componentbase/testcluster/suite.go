package testcluster

import (
	"context"
	"fmt"
	"os"
	"testing"
)

// SuiteOptions say what a suite's TestMain needs around its tests.
type SuiteOptions struct {
	// Name prefixes the suite's messages ("e2e/proxy").
	Name string
	// Root: the suite makes network namespaces or containers.
	Root bool
	// APIServer is the server the suite's tests share.
	APIServer APIServerOptions
	// LogLines of the server's log are printed when a test fails.
	LogLines int
}

// RunSuite is a suite's TestMain body: it launches the apiserver (set into
// *srv for the tests), runs them, prints the server's last log lines when
// one failed, and stops it, returning the exit code.
func RunSuite(m *testing.M, o SuiteOptions, srv **APIServer) int {
	if o.Root && os.Geteuid() != 0 {
		fmt.Fprintf(os.Stderr, "%s: must run as root: it creates network namespaces\n", o.Name)
		return 1
	}
	s, err := LaunchAPIServer(context.Background(), o.APIServer)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", o.Name, err)
		return 1
	}
	*srv = s
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "trireme-apiserver log (last lines):\n%s\n", s.LogTail(max(o.LogLines, 60)))
	}
	if err := s.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", o.Name, err)
		code = max(code, 1)
	}
	return code
}
