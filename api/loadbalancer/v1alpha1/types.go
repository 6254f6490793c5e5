package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is Trireme's LoadBalancer API group.
const GroupName = "loadbalancer.trireme.dev"

// SchemeGroupVersion is the group version of this package's kinds.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

// Resource names of the group.
const (
	KindAddressPool     = "AddressPool"
	ResourceAddressPool = "addresspools"
)

// AddressPoolResource is the AddressPool resource, for dynamic clients.
var AddressPoolResource = SchemeGroupVersion.WithResource(ResourceAddressPool)

// Annotations a Service carries to steer its LoadBalancer address.
const (
	// AnnotationAddressPool names the pool a Service's address comes from;
	// only that pool is tried, even one with autoAssign false.
	AnnotationAddressPool = "loadbalancer.trireme.dev/address-pool"
	// AnnotationAllowSharedIP is a sharing key: Services carrying the same
	// key may hold the same address as long as their ports differ.
	AnnotationAllowSharedIP = "loadbalancer.trireme.dev/allow-shared-ip"
)

// AddressPool is a set of addresses LoadBalancer Services get theirs from.
type AddressPool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the pool's addresses and who may use them.
	Spec AddressPoolSpec `json:"spec"`
	// Status is the pool's usage, written by the cloud-controller-manager.
	Status AddressPoolStatus `json:"status,omitempty"`
}

// AddressPoolSpec is a pool's addresses and the Services it serves.
type AddressPoolSpec struct {
	// Addresses are IPv4 or IPv6 CIDRs ("192.168.50.0/28") or inclusive
	// ranges ("192.168.50.10-192.168.50.20"); they must not overlap each
	// other.
	Addresses []string `json:"addresses"`
	// AutoAssign false keeps the pool for Services that name it
	// (AnnotationAddressPool) or ask for one of its addresses
	// (spec.loadBalancerIP); default true.
	AutoAssign *bool `json:"autoAssign,omitempty"`
	// AvoidBuggyIPs leaves out the addresses ending in .0 and .255, which
	// some old network stacks drop.
	AvoidBuggyIPs bool `json:"avoidBuggyIPs,omitempty"`
	// Namespaces, when set, limits the pool to Services of these
	// namespaces.
	Namespaces []string `json:"namespaces,omitempty"`
	// NamespaceSelector, when set, limits the pool to Services of the
	// namespaces whose labels it matches.
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	// ServiceSelector, when set, limits the pool to Services whose labels it
	// matches.
	ServiceSelector *metav1.LabelSelector `json:"serviceSelector,omitempty"`
}

// AddressPoolStatus is a pool's usage.
type AddressPoolStatus struct {
	// AssignedIPv4 and AssignedIPv6 count the addresses Services hold.
	AssignedIPv4 int64 `json:"assignedIPv4"`
	// AssignedIPv6 counts the IPv6 addresses Services hold.
	AssignedIPv6 int64 `json:"assignedIPv6"`
	// AvailableIPv4 counts the IPv4 addresses still free.
	AvailableIPv4 int64 `json:"availableIPv4"`
	// AvailableIPv6 counts the IPv6 addresses still free, at most 2^63-1.
	AvailableIPv6 int64 `json:"availableIPv6"`
	// Conditions: Valid is False, with the reason, for a pool the
	// cloud-controller-manager refused (one overlapping another).
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// AddressPoolList is a list of AddressPools.
type AddressPoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AddressPool `json:"items"`
}
