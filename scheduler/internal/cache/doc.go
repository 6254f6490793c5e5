// Package cache is the scheduler's view of nodes and the pods placed on
// them, fed by informers, including pods assumed on a node while their
// binding is in flight; each scheduling cycle works on a Snapshot of it.
package cache
