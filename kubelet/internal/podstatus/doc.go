// Package podstatus computes a pod's status from what the container
// runtime holds for it: addresses, container statuses, phase and the
// conditions the kubelet owns, as upstream's kubelet reports them.
package podstatus
