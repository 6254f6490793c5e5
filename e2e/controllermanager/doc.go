// Package controllermanager holds the end-to-end suite of
// trireme-controller-manager's workload controllers: the built apiserver
// and controller-manager run as processes and, with no kubelet or
// scheduler, the tests play the kubelet by writing pod status. The tests
// are in package controllermanager_test; run them with `make e2e` after
// `make build`.
package controllermanager
