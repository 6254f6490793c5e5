// Package nftables is the nftables back end: one table of its own
// ("trireme-proxy" in the ip or ip6 family) where verdict maps dispatch
// packets to one chain per ServicePort and endpoint addresses are map
// elements, so that a sync after one endpoint changed rewrites map
// elements and nothing else. Transactions are written by
// componentbase/nftbatch: over nfnetlink as one atomic batch (Netlink), or
// through sigs.k8s.io/knftables (Exec: the nft binary, or its fake in
// tests).
package nftables
