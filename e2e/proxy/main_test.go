// Package proxy_test runs trireme-proxy against the real apiserver and
// sends real packets through the rules it writes, in network namespaces
// the tests create, for both back ends.
package proxy_test

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
		fmt.Fprintln(os.Stderr, "e2e/proxy: must run as root: it creates network namespaces")
		return 1
	}
	s, err := testcluster.LaunchAPIServer(context.Background(), testcluster.APIServerOptions{ServiceClusterIPRange: "10.96.0.0/16"})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e/proxy: %v\n", err)
		return 1
	}
	srv = s
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "trireme-apiserver log (last lines):\n%s\n", s.LogTail(100))
	}
	if err := s.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e/proxy: %v\n", err)
		code = max(code, 1)
	}
	return code
}
