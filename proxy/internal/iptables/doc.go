// Package iptables is the iptables back end: chains prefixed TRIREME- in
// the nat and filter tables, written with iptables-restore --noflush so
// that a sync rewrites only the chains whose rules changed (a Service's
// own chains, and the dispatch chains only when a Service was added,
// removed or lost all endpoints). Built-in chains get one jump rule each
// into ours; nothing else of the host's is touched.
package iptables
