// Package kubelet installs upstream's KubeletConfiguration kind
// (kubelet.config.k8s.io/v1beta1) and gives it Trireme's defaulting and
// validation, so that configuration files written for kubeadm clusters
// configure trireme-kubelet unchanged.
package kubelet
