// Package dashboard_test runs trireme-dashboard against a real apiserver
// and drives its HTTP API as a page would: sign in with ServiceAccount
// tokens, act as those users only, and be refused what RBAC, CSRF and the
// API refuse.
package dashboard_test

import (
	"os"
	"testing"

	"trireme.dev/componentbase/testcluster"
)

var srv *testcluster.APIServer

func TestMain(m *testing.M) {
	os.Exit(testcluster.RunSuite(m, testcluster.SuiteOptions{Name: "e2e/dashboard"}, &srv))
}
