// Package cluster is the end-to-end suite of a cluster installed as users
// install one: the real `triremeadm init --single-node` below a temporary root
// directory (its own containerd, kubelet, static control plane, proxy and
// the addons' release: CoreDNS, flannel, trireme-netpol, metrics-server,
// local-path), two workers in network namespaces joined with the command init
// printed (the pod network between the nodes is flannel's alone;
// TestPodNetworkThroughput prints its throughput and round trips against the
// nodes' own addresses), tests that drive it with kubectl, and `triremeadm
// reset` at the end, even when a test fails, checked to leave nothing behind
// (flannel's devices, routes and rules and trireme-netpol's table included).
// It prints "N passed, N failed". The HA control plane (three control-plane
// nodes behind a virtual IP) has its own suite, e2e/faults.
//
// It changes the host — the switch namespace trclsw (its bridge trclbr0), the
// host node's veth trclhost0 (10.213.7.1/24) and network namespaces trclw1 and
// trclw2, the CNI bridge trireme0, flannel.1 with its routes and rules, the
// proxy's and trireme-netpol's nftables tables in the host's network
// namespace, ports 6443, 2379-2381, 10250, 10256, 10257, 10259 and 10262 — so
// it is opt-in: set TRIREME_E2E_CLUSTER=1 (`make e2e` does as root). Build
// first: `make build images`.
package cluster
