// Package faults is the fault-injection suite: a three-node HA control plane
// and one worker, every node a network namespace on this machine (init
// --control-plane-vip --upload-certs, join --control-plane, join), under a
// steady write load through the virtual IP — clients creating and updating
// ConfigMaps with known contents, each write's outcome recorded in a Ledger.
// Faults come one at a time, each healed before the next: an apiserver
// killed (on the VIP holder and on another node), the etcd leader killed, a
// control-plane node cut off from the others, the VIP holder's whole node
// stopped, containerd killed on the worker, the controller-manager and
// scheduler leaders killed. After each it prints how long writes were
// unavailable and how many requests failed; after all, it checks that every
// acknowledged write is readable with its last acknowledged value, that the
// three etcd members hold the same data (their hashes at one revision), and
// that the worker's pod was never restarted.
//
// It changes the host (the switch namespace trfsw, its bridge trfbr0, the
// host's veth trfhost0 with 10.214.9.1/24, namespaces trfcp1..3 and trfw1,
// cgroups /trireme-faults-*), so it is opt-in: TRIREME_E2E_FAULTS=1 (`make
// e2e` sets it as root). FAULTS_ROUNDS=N runs the faults N times over (`make
// bench` runs 3). Build first: `make build images`.
package faults
