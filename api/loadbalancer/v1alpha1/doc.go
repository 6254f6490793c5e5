// Package v1alpha1 is Trireme's own API group loadbalancer.trireme.dev,
// version v1alpha1: AddressPool, the cluster-scoped pools of addresses that
// trireme-cloud-controller-manager gives LoadBalancer Services, with the
// validation the controller and the configuration file share. The
// CustomResourceDefinition that serves the group is a template of the
// trireme-addons chart (templates/loadbalancer-crd.yaml); its schema and CEL
// rules mirror ValidateAddressPoolSpec.
package v1alpha1
