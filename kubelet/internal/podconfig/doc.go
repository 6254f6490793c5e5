// Package podconfig builds the CRI configurations the kubelet runs a pod
// with: its sandbox's (hostname, DNS, host ports, namespaces, cgroup
// parent) and each container's (command, environment with the downward
// API, mounts, resources, security context), labelled and annotated as
// upstream's kubelet labels them.
package podconfig
