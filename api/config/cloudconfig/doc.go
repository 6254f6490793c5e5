// Package cloudconfig is trireme-cloud-controller-manager's --cloud-config
// kind, CloudConfiguration (cloudconfig.config.trireme.dev/v1alpha1): the
// machine inventory nodes are initialized from and the LoadBalancer address
// pools, with their defaulting and validation. Trireme's own kind, as no
// upstream one exists for a bare-metal provider.
package cloudconfig
