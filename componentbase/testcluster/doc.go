// Package testcluster gives tests a Trireme control plane behind one small
// interface, Cluster, so that one test body runs at several depths: the
// apiserver's in-process testserver for integration, and the built
// binaries run as processes here for end-to-end suites. A suite picks its
// depth from DepthEnv.
//
// The process depth: StartAPIServer (inside a test, cleanup registered with
// tb.Cleanup) or LaunchAPIServer (in TestMain, where the caller must Close
// it) runs trireme-apiserver in dev mode, optionally with its own etcd
// process (APIServerOptions.ExternalEtcd: EtcdEndpoint, keys under
// StoragePrefix, so a test can write storage behind the server's back) and
// trireme-controller-manager. Each server gets its own temporary
// directory, holding its --data-dir and a kubectl cache, and a free
// loopback port (package freeport). Readiness is decided by GET /readyz
// with the admin kubeconfig the server writes. Every process is started
// with StartProcess and stopped by PID, never by name.
//
// KubectlCmd runs the machine's kubectl with KUBECONFIG pointing at a
// cluster; KubectlCmd.Start keeps it running in the background for
// commands such as `kubectl get -w`.
//
// Binaries are looked up in $TRIREME_BIN_DIR, or <repo>/_output/bin where
// `make build` puts them; a missing binary is reported with a message
// naming `make build`.
package testcluster
