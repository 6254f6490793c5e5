// Package framework starts Trireme components as real processes for
// end-to-end suites and stops them by PID when done.
//
// A suite starts an apiserver with StartAPIServer (inside a test, cleanup is
// registered with t.Cleanup) or LaunchAPIServer (in TestMain, where the caller
// must Close it). Each server gets its own temporary directory, holding the
// server's --data-dir and a kubectl cache, and a free loopback port. Readiness
// is decided by GET /readyz with the admin kubeconfig the server writes.
// With APIServerOptions.ExternalEtcd the server stores into an etcd process
// of its own (EtcdEndpoint, keys under StoragePrefix) instead of its
// embedded one, so a test can write storage behind the server's back.
//
// Kubectl runs the machine's kubectl with KUBECONFIG pointing at a server;
// StartKubectl keeps it running in the background for commands such as
// `kubectl get -w`.
//
// Binaries are looked up in $TRIREME_BIN_DIR, or <repo>/_output/bin where
// `make build` puts them; a missing binary is reported with a message naming
// `make build`.
package framework
