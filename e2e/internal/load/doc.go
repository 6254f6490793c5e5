// Package load drives a Kubernetes-compatible apiserver with many concurrent
// client-go clients and reports throughput, latency percentiles, large-list
// latency, watch fan-out completeness and the server's memory.
//
// It takes the server address and credentials only from a kubeconfig, so the
// same figures can be taken from Trireme and from any other apiserver. It
// works in a namespace of its own and removes what it created.
package load
