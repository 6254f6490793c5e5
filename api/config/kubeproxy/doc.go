// Package kubeproxy installs, defaults and validates upstream's
// KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1), so that files
// written for kube-proxy configure trireme-proxy unchanged.
package kubeproxy
