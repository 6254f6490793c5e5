// Package scale is the scale harness: one external etcd, a control plane
// (Trireme's, or upstream's components built by hack/build-upstream.sh),
// kwok faking the nodes, and a workload of Deployments, Services, a rolling
// update, NotReady nodes, a namespace deletion, full-size lists and pod
// watchers, whose figures it prints. `make bench-scale` runs it at 1,000
// nodes and 30,000 pods; its test runs it small. See README.md.
package scale
