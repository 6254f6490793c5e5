package cloudconfig

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	lbv1alpha1 "trireme.dev/api/loadbalancer/v1alpha1"
)

// GroupName is the API group of the kind.
const GroupName = "cloudconfig.config.trireme.dev"

// APIVersion is the apiVersion a CloudConfiguration carries.
const APIVersion = GroupName + "/v1alpha1"

// Kind is the kind's name.
const Kind = "CloudConfiguration"

// DefaultProviderIDScheme prefixes the provider ID of a machine that gives
// none: trireme://<node name>.
const DefaultProviderIDScheme = "trireme://"

// CloudConfiguration is the provider's configuration file.
type CloudConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// Machines is the inventory: one entry per machine, matched to its Node
	// by name.
	Machines []Machine `json:"machines,omitempty"`
	// RemoveUnlistedNodes makes Machines the whole inventory: a Node no
	// entry names is a machine that is gone, and is deleted once NotReady.
	// By default such a Node is kept and initialized from its own labels
	// and its kubelet's node IP.
	RemoveUnlistedNodes bool `json:"removeUnlistedNodes,omitempty"`
	// LoadBalancer holds the address pools of LoadBalancer Services; more
	// pools can be added as AddressPool objects.
	LoadBalancer LoadBalancer `json:"loadBalancer,omitempty"`
}

// Machine is one machine of the inventory.
type Machine struct {
	// Name is the name of the machine's Node.
	Name string `json:"name"`
	// ProviderID is the Node's spec.providerID; default trireme://<name>.
	ProviderID string `json:"providerID,omitempty"`
	// Addresses are the Node's addresses; empty means the node IP its
	// kubelet reports and its name as Hostname.
	Addresses []corev1.NodeAddress `json:"addresses,omitempty"`
	// Zone and Region become topology.kubernetes.io/zone and region; empty
	// ones are taken from the Node's own labels.
	Zone string `json:"zone,omitempty"`
	// Region is the machine's region.
	Region string `json:"region,omitempty"`
	// InstanceType becomes node.kubernetes.io/instance-type.
	InstanceType string `json:"instanceType,omitempty"`
	// Shutdown marks a machine that is powered off: its Node gets the
	// node.cloudprovider.kubernetes.io/shutdown taint while NotReady.
	Shutdown bool `json:"shutdown,omitempty"`
}

// LoadBalancer configures LoadBalancer Services' addresses.
type LoadBalancer struct {
	// Pools are address pools, as AddressPool objects' specs.
	Pools []Pool `json:"pools,omitempty"`
}

// Pool is a named address pool.
type Pool struct {
	// Name names the pool in Events and in the
	// loadbalancer.trireme.dev/address-pool annotation; it must not be the
	// name of an AddressPool object too.
	Name                       string `json:"name"`
	lbv1alpha1.AddressPoolSpec `json:",inline"`
}
