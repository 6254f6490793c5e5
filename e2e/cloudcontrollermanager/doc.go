// Package cloudcontrollermanager holds end-to-end tests of
// trireme-cloud-controller-manager, run as a process against a real
// trireme-apiserver with the AddressPool CRD of the addons chart. No
// kubelet runs: tests register Nodes as a kubelet with
// --cloud-provider=external does.
package cloudcontrollermanager
