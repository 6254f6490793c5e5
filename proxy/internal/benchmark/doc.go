// Package benchmark measures both back ends against the real kernel, in
// a network namespace of its own: a full sync of N Services with 10
// endpoints each (spread, as their slices say, over a 100-node cluster),
// and a sync after one endpoint changed (`make bench`). It needs root.
package benchmark
