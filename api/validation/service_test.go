package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func validService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: meta("web"),
		Spec: corev1.ServiceSpec{
			Type:                  corev1.ServiceTypeClusterIP,
			Ports:                 []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)}},
			Selector:              map[string]string{"app": "web"},
			SessionAffinity:       corev1.ServiceAffinityNone,
			ClusterIP:             "10.96.0.10",
			ClusterIPs:            []string{"10.96.0.10"},
			IPFamilies:            []corev1.IPFamily{corev1.IPv4Protocol},
			IPFamilyPolicy:        ptr(corev1.IPFamilyPolicySingleStack),
			InternalTrafficPolicy: ptr(corev1.ServiceInternalTrafficPolicyCluster),
		},
	}
}

func TestServiceCreate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(s *corev1.Service)
		want   []want
	}{
		{"valid", func(s *corev1.Service) {}, nil},
		{"name must be dns-1035", func(s *corev1.Service) { s.Name = "1web" }, []want{invalid("metadata.name")}},
		{"ports required", func(s *corev1.Service) { s.Spec.Ports = nil }, []want{required("spec.ports")}},
		{"headless needs no ports", func(s *corev1.Service) {
			s.Spec.Ports = nil
			s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ClusterIPNone, []string{corev1.ClusterIPNone}
		}, nil},
		{"port names required when several", func(s *corev1.Service) {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(443)})
		}, []want{required("spec.ports[0].name")}},
		{"duplicate port names", func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{
				{Name: "web", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(80)},
				{Name: "web", Port: 81, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(81)},
			}
		}, []want{dup("spec.ports[1].name")}},
		{"port range and protocol", func(s *corev1.Service) {
			s.Spec.Ports[0].Port = 0
			s.Spec.Ports[0].Protocol = "ICMP"
		}, []want{invalid("spec.ports[0].port"), notSup("spec.ports[0].protocol")}},
		{"targetPort name invalid", func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromString("no_good") }, []want{invalid("spec.ports[0].targetPort")}},
		{"nodePort on ClusterIP", func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30080 }, []want{forbidden("spec.ports[0].nodePort")}},
		{"nodePort out of numeric range", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
			s.Spec.Ports[0].NodePort = 70000
		}, []want{invalid("spec.ports[0].nodePort")}},
		{"type enum", func(s *corev1.Service) { s.Spec.Type = "Public" }, []want{notSup("spec.type")}},
		{"None only for ClusterIP type", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
			s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ClusterIPNone, []string{corev1.ClusterIPNone}
		}, []want{invalid("spec.clusterIPs[0]")}},
		{"externalName required", func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, SessionAffinity: corev1.ServiceAffinityNone}
		}, []want{required("spec.externalName")}},
		{"externalName with trailing dot", func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, SessionAffinity: corev1.ServiceAffinityNone, ExternalName: "db.example.com."}
		}, nil},
		{"clientIP affinity needs timeout", func(s *corev1.Service) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		}, []want{required("spec.sessionAffinityConfig")}},
		{"affinity config with None", func(s *corev1.Service) {
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{}
		}, []want{forbidden("spec.sessionAffinityConfig")}},
		{"clusterIPs must match clusterIP", func(s *corev1.Service) { s.Spec.ClusterIPs = []string{"10.96.0.11"} }, []want{invalid("spec.clusterIPs")}},
		{"family mismatch", func(s *corev1.Service) { s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol} }, []want{invalid("spec.clusterIPs[0]")}},
		{"dual stack needs a dual policy", func(s *corev1.Service) {
			s.Spec.ClusterIPs = []string{"10.96.0.10", "fd00::10"}
			s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
		}, []want{invalid("spec.ipFamilyPolicy")}},
		{"two IPs of one family", func(s *corev1.Service) {
			s.Spec.ClusterIPs = []string{"10.96.0.10", "10.96.0.11"}
			s.Spec.IPFamilyPolicy = ptr(corev1.IPFamilyPolicyRequireDualStack)
		}, []want{invalid("spec.clusterIPs")}},
		{"source ranges only for LoadBalancer", func(s *corev1.Service) {
			s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8", "nope"}
		}, []want{forbidden("spec.LoadBalancerSourceRanges"), invalid("spec.LoadBalancerSourceRanges[1]")}},
		{"load balancer fields", func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		}, []want{required("spec.allocateLoadBalancerNodePorts"), required("spec.healthCheckNodePort")}},
		{"externalTrafficPolicy on internal service", func(s *corev1.Service) {
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		}, []want{invalid("spec.externalTrafficPolicy")}},
		{"loopback externalIP", func(s *corev1.Service) { s.Spec.ExternalIPs = []string{"127.0.0.1"} }, []want{invalid("spec.externalIPs[0]"), required("spec.externalTrafficPolicy")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := validService()
			tc.mutate(s)
			expectErrs(t, ValidateCreate(s), tc.want...)
		})
	}
}

func TestServiceUpdate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(s, old *corev1.Service)
		want   []want
	}{
		{"unchanged", func(s, old *corev1.Service) {}, nil},
		{"clusterIP immutable", func(s, old *corev1.Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.96.0.99", []string{"10.96.0.99"}
		}, []want{invalid("spec.clusterIPs[0]")}},
		{"to ExternalName drops IPs", func(s, old *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, SessionAffinity: corev1.ServiceAffinityNone, ExternalName: "db.example.com"}
		}, nil},
		{"upgrade to dual stack", func(s, old *corev1.Service) {
			s.Spec.ClusterIPs = []string{"10.96.0.10", "fd00::10"}
			s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
			s.Spec.IPFamilyPolicy = ptr(corev1.IPFamilyPolicyPreferDualStack)
		}, nil},
		{"primary family immutable", func(s, old *corev1.Service) {
			s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}
		}, []want{invalid("spec.ipFamilies[0]"), invalid("spec.clusterIPs[0]")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, s := validService(), validService()
			stored(&old.ObjectMeta)
			stored(&s.ObjectMeta)
			tc.mutate(s, old)
			expectErrs(t, ValidateUpdate(s, old), tc.want...)
		})
	}
	t.Run("status load balancer", func(t *testing.T) {
		old, s := validService(), validService()
		stored(&old.ObjectMeta)
		stored(&s.ObjectMeta)
		s.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "203.0.113.9"}, {Hostname: "10.0.0.1"}}
		expectErrs(t, ValidateStatusUpdate(s, old), required("status.loadBalancer.ingress[0].ipMode"), invalid("status.loadBalancer.ingress[1].hostname"))
	})
}
