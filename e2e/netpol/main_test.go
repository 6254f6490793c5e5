// Package netpol_test runs trireme-netpol against the real apiserver in a
// "node" network namespace and sends real TCP and UDP packets between pod
// namespaces through the table it writes.
package netpol_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"trireme.dev/componentbase/testcluster"
)

var srv *testcluster.APIServer

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "e2e/netpol: must run as root: it creates network namespaces")
		return 1
	}
	s, err := testcluster.LaunchAPIServer(context.Background(), testcluster.APIServerOptions{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e/netpol: %v\n", err)
		return 1
	}
	srv = s
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "trireme-apiserver log (last lines):\n%s\n", s.LogTail(60))
	}
	if err := s.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e/netpol: %v\n", err)
		code = max(code, 1)
	}
	return code
}
