package defaults

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// EndpointSlice gives every port an explicit empty name and protocol TCP.
func EndpointSlice(es *discoveryv1.EndpointSlice) {
	for i := range es.Ports {
		p := &es.Ports[i]
		if p.Name == nil {
			p.Name = new("")
		}
		if p.Protocol == nil {
			p.Protocol = new(corev1.ProtocolTCP)
		}
	}
}

// NetworkPolicy sets the protocol of every rule port to TCP and, when no
// policy types are listed, infers them: Ingress always (a policy with no
// rules isolates its pods for ingress), and Egress when egress rules exist.
func NetworkPolicy(np *networkingv1.NetworkPolicy) {
	for i := range np.Spec.Ingress {
		networkPolicyPorts(np.Spec.Ingress[i].Ports)
	}
	for i := range np.Spec.Egress {
		networkPolicyPorts(np.Spec.Egress[i].Ports)
	}
	if len(np.Spec.PolicyTypes) == 0 {
		np.Spec.PolicyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}
		if len(np.Spec.Egress) != 0 {
			np.Spec.PolicyTypes = append(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
		}
	}
}

func networkPolicyPorts(ports []networkingv1.NetworkPolicyPort) {
	for i := range ports {
		if ports[i].Protocol == nil {
			ports[i].Protocol = new(corev1.ProtocolTCP)
		}
	}
}

// IngressClass scopes a parameters reference without a scope to the
// cluster.
func IngressClass(ic *networkingv1.IngressClass) {
	if p := ic.Spec.Parameters; p != nil && p.Scope == nil {
		p.Scope = new(networkingv1.IngressClassParametersReferenceScopeCluster)
	}
}
