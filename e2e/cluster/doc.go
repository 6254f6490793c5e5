// Package cluster is the single-node end-to-end suite: the real
// `triremeadm init --single-node` installs a cluster below a temporary root
// directory (its own containerd, kubelet, static control plane and proxy), the
// tests drive it with kubectl, and `triremeadm reset` removes it at the end,
// even when a test fails.
//
// It changes the host — an address on a bridge of its own, the CNI bridge
// trireme0 and the proxy's nftables table in the host's network namespace,
// ports 6443, 2379-2381, 10250, 10256, 10257 and 10259 — so it is opt-in:
// set TRIREME_E2E_CLUSTER=1. Build first: `make build images`.
package cluster
