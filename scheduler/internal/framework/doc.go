// Package framework is trireme-scheduler's implementation of the scheduling
// framework upstream publishes in k8s.io/kube-scheduler/framework: the node
// and pod information plugins read (NodeInfo, PodInfo), the cycle state, and
// the runtime that builds a profile's plugins from the configuration and
// runs them at each extension point.
package framework
