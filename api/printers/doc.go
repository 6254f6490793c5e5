// Package printers renders served objects as metav1.Tables with the columns
// upstream's kube-apiserver returns, so `kubectl get` looks the same.
package printers
