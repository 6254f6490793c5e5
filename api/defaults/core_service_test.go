package defaults

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Expected values: upstream pkg/apis/core/v1/defaults.go SetDefaults_Service
// and SetDefaults_Endpoints, plus ServicePort.Protocol +default="TCP".
func TestService(t *testing.T) {
	runDefaulting(t, Service, []defaultingCase[corev1.Service]{
		{
			name: "cluster IP service",
			in: &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
				{Name: "http", Port: 80},
				{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromString("dns")},
			}}},
			want: &corev1.Service{Spec: corev1.ServiceSpec{
				Ports: []corev1.ServicePort{
					// Protocol TCP; targetPort = port when unset.
					{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)},
					{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromString("dns")},
				},
				Type:                  corev1.ServiceTypeClusterIP,
				SessionAffinity:       corev1.ServiceAffinityNone,
				InternalTrafficPolicy: new(corev1.ServiceInternalTrafficPolicyCluster),
			}},
		},
		{
			name: "cluster IP service with external IPs is externally accessible",
			in:   &corev1.Service{Spec: corev1.ServiceSpec{ExternalIPs: []string{"192.0.2.1"}}},
			want: &corev1.Service{Spec: corev1.ServiceSpec{
				ExternalIPs:           []string{"192.0.2.1"},
				Type:                  corev1.ServiceTypeClusterIP,
				SessionAffinity:       corev1.ServiceAffinityNone,
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster, // service.ExternallyAccessible
				InternalTrafficPolicy: new(corev1.ServiceInternalTrafficPolicyCluster),
			}},
		},
		{
			name: "node port service",
			in:   &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort}},
			want: &corev1.Service{Spec: corev1.ServiceSpec{
				Type:                  corev1.ServiceTypeNodePort,
				SessionAffinity:       corev1.ServiceAffinityNone,
				ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster,
				InternalTrafficPolicy: new(corev1.ServiceInternalTrafficPolicyCluster),
			}},
		},
		{
			name: "load balancer service with status ingress",
			in: &corev1.Service{
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal},
				Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
					{IP: "192.0.2.10"}, {Hostname: "lb.example.com"}, {IP: "192.0.2.11", IPMode: new(corev1.LoadBalancerIPModeProxy)},
				}}},
			},
			want: &corev1.Service{
				Spec: corev1.ServiceSpec{
					Type:                          corev1.ServiceTypeLoadBalancer,
					SessionAffinity:               corev1.ServiceAffinityNone,
					ExternalTrafficPolicy:         corev1.ServiceExternalTrafficPolicyLocal,
					InternalTrafficPolicy:         new(corev1.ServiceInternalTrafficPolicyCluster),
					AllocateLoadBalancerNodePorts: new(true),
				},
				// ipMode VIP for IP ingresses of a LoadBalancer only.
				Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
					{IP: "192.0.2.10", IPMode: new(corev1.LoadBalancerIPModeVIP)}, {Hostname: "lb.example.com"}, {IP: "192.0.2.11", IPMode: new(corev1.LoadBalancerIPModeProxy)},
				}}},
			},
		},
		{
			// ExternalName services get neither traffic policy.
			name: "external name service",
			in:   &corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}},
			want: &corev1.Service{Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com", SessionAffinity: corev1.ServiceAffinityNone,
			}},
		},
		{
			name: "client IP affinity gets three hours",
			in:   &corev1.Service{Spec: corev1.ServiceSpec{SessionAffinity: corev1.ServiceAffinityClientIP, SessionAffinityConfig: &corev1.SessionAffinityConfig{}}},
			want: &corev1.Service{Spec: corev1.ServiceSpec{
				Type:            corev1.ServiceTypeClusterIP,
				SessionAffinity: corev1.ServiceAffinityClientIP,
				// DefaultClientIPServiceAffinitySeconds.
				SessionAffinityConfig: &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: new(int32(10800))}},
				InternalTrafficPolicy: new(corev1.ServiceInternalTrafficPolicyCluster),
			}},
		},
		{
			name: "affinity config dropped without affinity",
			in: &corev1.Service{Spec: corev1.ServiceSpec{SessionAffinityConfig: &corev1.SessionAffinityConfig{
				ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: new(int32(60))},
			}}},
			want: &corev1.Service{Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeClusterIP, SessionAffinity: corev1.ServiceAffinityNone, InternalTrafficPolicy: new(corev1.ServiceInternalTrafficPolicyCluster),
			}},
		},
	})
}

func TestEndpoints(t *testing.T) {
	runDefaulting(t, Endpoints, []defaultingCase[corev1.Endpoints]{
		{
			name: "ports get TCP",
			in: &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{
				Ports: []corev1.EndpointPort{{Port: 80}, {Port: 53, Protocol: corev1.ProtocolUDP}},
			}}},
			want: &corev1.Endpoints{Subsets: []corev1.EndpointSubset{{
				Ports: []corev1.EndpointPort{{Port: 80, Protocol: corev1.ProtocolTCP}, {Port: 53, Protocol: corev1.ProtocolUDP}},
			}}},
		},
	})
}
