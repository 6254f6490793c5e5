// Package faults is the fault-injection suite: a three-node HA control plane
// and one worker, every node a network namespace on this machine (init
// --control-plane-vip --upload-certs, join --control-plane, join), under a
// steady write load through the virtual IP — clients creating and updating
// ConfigMaps with known contents, each write's outcome recorded in a Ledger.
//
// TestHAControlPlane checks the cluster as installed (three voting etcd
// members, one leader each, the VIP held); the teardown checks that reset
// removes each node's etcd member and the VIP and leaves nothing behind.
// TestFaults brings the faults one at a time, each healed before the next:
// an apiserver killed (off and on the VIP holder), the etcd leader killed, a
// control-plane node cut off from the others, the etcd leader's node cut
// off, the VIP holder's whole node stopped (then again, when it leads etcd
// too: etcd's leader moved there first), the disk of cp3's etcd member
// (a small tmpfs) full, containerd killed on the worker, the
// controller-manager and scheduler leaders killed.
// After each it prints how long writes were unavailable and which requests
// failed (for a fault on the VIP holder also when the VIP moved, and each
// etcd member's applied log before the fault); "whole again" counts only
// once every member has caught up with the leader's log. After all, it checks that every acknowledged write is readable with
// its last acknowledged value (a failed or timed-out write may or may not
// have happened), that the three etcd members hold the same data (their
// hashes at one revision), and that the worker's pod was never restarted.
// FAULTS_ROUNDS=N brings the faults N times over. TestUpgrade, given an
// earlier build (TRIREME_E2E_UPGRADE_FROM: its bin directory, which then
// installs the cluster), upgrades the control plane to this build under the
// same load with the same checks, then drains the worker, upgrades its
// kubelet and uncordons it (`make bench-faults`). TestRestore, last, takes an
// etcd snapshot, changes the cluster, resets every node and brings the whole
// cluster back with `init --etcd-restore` and joins: the snapshot's objects
// and pods are back, what came after is gone, the members agree.
// BenchmarkSnapshot1GB (`-bench Snapshot1GB`; `make bench-faults` runs
// it) fills etcd to a 1 GiB database (keys of its own, beside the
// apiserver's) and times `triremeadm etcd snapshot save` under the write
// load, with the load's latency during the snapshot beside its latency
// just before.
//
// It changes the host (the switch namespace trfsw, its bridge trfbr0, the
// host's veth trfhost0 with 10.214.9.1/24, namespaces trfcp1..3 and trfw1,
// cgroups /trireme-faults-*, a tmpfs below its root), so it is opt-in:
// TRIREME_E2E_FAULTS=1 (`make e2e` sets it as root). Build first: `make build
// images`.
package faults
