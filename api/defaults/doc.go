// Package defaults sets the field defaults upstream Kubernetes applies, for
// every served type, so objects read back exactly as from a kube-apiserver.
package defaults
