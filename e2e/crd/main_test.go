package crd_test

import (
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
	return testcluster.RunSuite(m, testcluster.SuiteOptions{Name: "e2e/crd", APIServer: testcluster.APIServerOptions{ControllerManager: true}, LogLines: 200}, &srv)
}
