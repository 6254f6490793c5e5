package defaults

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Service sets the defaults of a Service. Cluster IPs, IP families and the
// IP family policy are not defaults: the service registry sets them when it
// allocates addresses.
func Service(s *corev1.Service) {
	spec := &s.Spec
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	switch spec.SessionAffinity {
	case corev1.ServiceAffinityNone:
		// A config means nothing without affinity; upstream drops it.
		spec.SessionAffinityConfig = nil
	case corev1.ServiceAffinityClientIP:
		if c := spec.SessionAffinityConfig; c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{
				ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: new(corev1.DefaultClientIPServiceAffinitySeconds)},
			}
		}
	}
	if spec.Type == "" {
		spec.Type = corev1.ServiceTypeClusterIP
	}
	for i := range spec.Ports {
		p := &spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	if externallyAccessible(s) && spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if spec.InternalTrafficPolicy == nil {
		switch spec.Type {
		case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
			spec.InternalTrafficPolicy = new(corev1.ServiceInternalTrafficPolicyCluster)
		}
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer {
		if spec.AllocateLoadBalancerNodePorts == nil {
			spec.AllocateLoadBalancerNodePorts = new(true)
		}
		for i := range s.Status.LoadBalancer.Ingress {
			ing := &s.Status.LoadBalancer.Ingress[i]
			if ing.IP != "" && ing.IPMode == nil {
				ing.IPMode = new(corev1.LoadBalancerIPModeVIP)
			}
		}
	}
}

// externallyAccessible reports whether traffic can reach s from outside the
// cluster: through node ports, a load balancer or external IPs.
func externallyAccessible(s *corev1.Service) bool {
	switch s.Spec.Type {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeClusterIP:
		return len(s.Spec.ExternalIPs) > 0
	}
	return false
}

// Endpoints sets the protocol of every port that lacks one to TCP.
func Endpoints(e *corev1.Endpoints) {
	for i := range e.Subsets {
		ports := e.Subsets[i].Ports
		for j := range ports {
			if ports[j].Protocol == "" {
				ports[j].Protocol = corev1.ProtocolTCP
			}
		}
	}
}
