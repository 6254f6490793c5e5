// Package kubelet is the end-to-end suite of trireme-kubelet: the real
// apiserver and controller-manager, a private containerd with runc and
// Debian's CNI plugins, and the kubelet binary, with pods bound to its
// node by spec.nodeName.
package kubelet
