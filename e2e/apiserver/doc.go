// Package apiserver holds the end-to-end suite of trireme-apiserver: the
// built binary runs in dev mode beside the controller-manager and the
// machine's kubectl talks to it, with upstream Kubernetes' answers as the
// expected output. The tests are in package apiserver_test; run them with
// `make e2e` after `make build`. Bad input, discovery, restart and watch
// are tested once, in the apiserver's integration suite
// (apiserver/test/integration), which `make e2e` also runs against the
// built binary.
package apiserver
