// Package v1alpha1 holds triremeadm's own configuration kinds — InitConfiguration,
// ClusterConfiguration and JoinConfiguration — in the API group
// triremeadm.config.trireme.dev, version v1alpha1 (apiVersion
// "triremeadm.config.trireme.dev/v1alpha1"), with their defaulting and validation;
// triremeadm reads them from its multi-document --config file through
// trireme.dev/componentbase/configfile. The kinds follow kubeadm's v1beta4 shapes
// so that a kubeadm user finds the same fields; Trireme-only kinds live here rather
// than in a borrowed upstream group so that no file pretends to be kubeadm's.
package v1alpha1
