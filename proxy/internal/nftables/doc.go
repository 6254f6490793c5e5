// Package nftables is the nftables back end: one table of its own
// ("trireme-proxy" in the ip or ip6 family) where verdict maps dispatch
// packets to one chain per ServicePort, so that a sync after one Service
// or endpoint changed rewrites that Service's chain and map elements and
// nothing else. Transactions go through sigs.k8s.io/knftables (the nft
// binary), each one atomic.
package nftables
