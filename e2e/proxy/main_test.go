// Package proxy_test runs trireme-proxy against the real apiserver and
// sends real packets through the rules it writes, in network namespaces
// the tests create, for both back ends.
package proxy_test

import (
	"os"
	"testing"

	"trireme.dev/componentbase/testcluster"
)

var srv *testcluster.APIServer

func TestMain(m *testing.M) {
	os.Exit(testcluster.RunSuite(m, testcluster.SuiteOptions{
		Name: "e2e/proxy", Root: true, APIServer: testcluster.APIServerOptions{ServiceClusterIPRange: "10.96.0.0/16"}, LogLines: 100,
	}, &srv))
}
