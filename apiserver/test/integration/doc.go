// Package integration drives a trireme-apiserver with client-go (typed,
// dynamic and raw REST clients, JSON and protobuf) and the machine's
// kubectl, and checks that it answers as a kube-apiserver does. The tests
// are in *_test.go files; one server, started in TestMain, serves the whole
// package, and tests that restart a server start their own.
//
// The tests are written against testcluster.Cluster and run at two depths:
// `go test` runs the server inside the test binary (testserver);
// TRIREME_TEST_DEPTH=process runs the built trireme-apiserver from
// TRIREME_BIN_DIR (or _output/bin), as `make e2e` does after `make build`.
package integration
