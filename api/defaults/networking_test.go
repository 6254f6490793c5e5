package defaults

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Expected values: upstream pkg/apis/discovery/v1/defaults.go
// SetDefaults_EndpointPort and pkg/apis/networking/v1/defaults.go
// SetDefaults_NetworkPolicy, SetDefaults_NetworkPolicyPort,
// SetDefaults_IngressClass.

func TestEndpointSlice(t *testing.T) {
	runDefaulting(t, EndpointSlice, []defaultingCase[discoveryv1.EndpointSlice]{
		{
			name: "ports get empty name and TCP",
			in: &discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{
				{Port: new(int32(80))},
				{Name: new("dns"), Protocol: new(corev1.ProtocolUDP), Port: new(int32(53))},
			}},
			want: &discoveryv1.EndpointSlice{AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{
				{Name: new(""), Protocol: new(corev1.ProtocolTCP), Port: new(int32(80))},
				{Name: new("dns"), Protocol: new(corev1.ProtocolUDP), Port: new(int32(53))},
			}},
		},
	})
}

func TestNetworkPolicy(t *testing.T) {
	port := intstr.FromInt32(5432)
	runDefaulting(t, NetworkPolicy, []defaultingCase[networkingv1.NetworkPolicy]{
		{
			name: "no rules means ingress isolation",
			in:   &networkingv1.NetworkPolicy{},
			want: &networkingv1.NetworkPolicy{Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}},
		},
		{
			name: "egress rules add Egress and ports get TCP",
			in: &networkingv1.NetworkPolicy{Spec: networkingv1.NetworkPolicySpec{
				Ingress: []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: &port}}}},
				Egress:  []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{Protocol: new(corev1.ProtocolUDP)}}}},
			}},
			want: &networkingv1.NetworkPolicy{Spec: networkingv1.NetworkPolicySpec{
				Ingress:     []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Protocol: new(corev1.ProtocolTCP), Port: &port}}}},
				Egress:      []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{{Protocol: new(corev1.ProtocolUDP)}}}},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			}},
		},
		{
			name: "explicit policy types kept",
			in:   &networkingv1.NetworkPolicy{Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}}},
			want: &networkingv1.NetworkPolicy{Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}}},
		},
	})
}

func TestIngressClass(t *testing.T) {
	runDefaulting(t, IngressClass, []defaultingCase[networkingv1.IngressClass]{
		{
			name: "parameters scoped to cluster",
			in:   &networkingv1.IngressClass{Spec: networkingv1.IngressClassSpec{Controller: "x/y", Parameters: &networkingv1.IngressClassParametersReference{Kind: "K", Name: "n"}}},
			want: &networkingv1.IngressClass{Spec: networkingv1.IngressClassSpec{Controller: "x/y", Parameters: &networkingv1.IngressClassParametersReference{Kind: "K", Name: "n", Scope: new("Cluster")}}},
		},
		{
			name: "no parameters",
			in:   &networkingv1.IngressClass{Spec: networkingv1.IngressClassSpec{Controller: "x/y"}},
			want: &networkingv1.IngressClass{Spec: networkingv1.IngressClassSpec{Controller: "x/y"}},
		},
	})
}
