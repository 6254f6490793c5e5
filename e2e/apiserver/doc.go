// Package apiserver holds the end-to-end suite of trireme-apiserver: the
// built binary runs in dev mode and the machine's kubectl talks to it, with
// upstream Kubernetes' answers as the expected output. The tests are in
// package apiserver_test; run them with `make e2e` after `make build`.
package apiserver
