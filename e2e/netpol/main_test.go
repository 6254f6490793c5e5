// Package netpol_test runs trireme-netpol against the real apiserver in a
// "node" network namespace and sends real TCP and UDP packets between pod
// namespaces through the table it writes.
package netpol_test

import (
	"os"
	"testing"

	"trireme.dev/componentbase/testcluster"
)

var srv *testcluster.APIServer

func TestMain(m *testing.M) {
	os.Exit(testcluster.RunSuite(m, testcluster.SuiteOptions{Name: "e2e/netpol", Root: true}, &srv))
}
