// Package controllermanager holds end-to-end tests of
// trireme-controller-manager's controllers against a real trireme-apiserver.
// No kubelet runs: tests play the kubelet by writing pod status through the
// status subresource.
package controllermanager
