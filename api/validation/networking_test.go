package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func validIngress() *networkingv1.Ingress {
	return &networkingv1.Ingress{ObjectMeta: meta("web"), Spec: networkingv1.IngressSpec{
		IngressClassName: ptr("nginx"),
		Rules: []networkingv1.IngressRule{{Host: "*.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{{Path: "/api", PathType: ptr(networkingv1.PathTypePrefix), Backend: networkingv1.IngressBackend{
				Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}},
		}}}},
	}}
}

func TestIngress(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(in *networkingv1.Ingress)
		want   []want
	}{
		{"valid", func(in *networkingv1.Ingress) {}, nil},
		{"needs rules or default backend", func(in *networkingv1.Ingress) { in.Spec.Rules = nil }, []want{invalid("spec.rules")}},
		{"host may not be an IP", func(in *networkingv1.Ingress) { in.Spec.Rules[0].Host = "10.0.0.1" }, []want{invalid("spec.rules[0].host")}},
		{"path type required", func(in *networkingv1.Ingress) { in.Spec.Rules[0].HTTP.Paths[0].PathType = nil }, []want{required("spec.rules[0].http.paths[0].pathType")}},
		{"prefix path must be absolute and clean", func(in *networkingv1.Ingress) { in.Spec.Rules[0].HTTP.Paths[0].Path = "api//v1" }, []want{
			invalid("spec.rules[0].http.paths[0].path"), invalid("spec.rules[0].http.paths[0].path")}},
		{"backend port both", func(in *networkingv1.Ingress) {
			in.Spec.Rules[0].HTTP.Paths[0].Backend.Service.Port = networkingv1.ServiceBackendPort{Name: "http", Number: 80}
		}, []want{invalid("spec.rules[0].http.paths[0].backend.service.port")}},
		{"backend both kinds", func(in *networkingv1.Ingress) {
			in.Spec.Rules[0].HTTP.Paths[0].Backend.Resource = &corev1.TypedLocalObjectReference{Kind: "Bucket", Name: "b"}
		}, []want{invalid("spec.rules[0].http.paths[0].backend")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := validIngress()
			tc.mutate(in)
			expectErrs(t, ValidateCreate(in), tc.want...)
		})
	}
}

func TestIngressClass(t *testing.T) {
	ic := &networkingv1.IngressClass{ObjectMeta: clusterMeta("nginx"), Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}}
	expectErrs(t, ValidateCreate(ic))
	bad := ic.DeepCopy()
	bad.Spec.Controller = "nginx"
	bad.Spec.Parameters = &networkingv1.IngressClassParametersReference{Kind: "Params", Name: "p", Scope: ptr("Namespace")}
	expectErrs(t, ValidateCreate(bad), invalid("spec.controller"), required("spec.parameters.namespace"))
	t.Run("controller immutable", func(t *testing.T) {
		old := ic.DeepCopy()
		stored(&old.ObjectMeta)
		n := old.DeepCopy()
		n.Spec.Controller = "example.com/other"
		expectErrs(t, ValidateUpdate(n, old), invalid("spec.controller"))
	})
}

func TestNetworkPolicy(t *testing.T) {
	np := &networkingv1.NetworkPolicy{ObjectMeta: meta("deny"), Spec: networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: webLabels},
		Ingress: []networkingv1.NetworkPolicyIngressRule{{
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr(corev1.ProtocolTCP), Port: ptr(intstr.FromInt32(8000)), EndPort: ptr[int32](9000)}},
			From:  []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}}}},
		}},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
	}}
	expectErrs(t, ValidateCreate(np))
	bad := np.DeepCopy()
	bad.Spec.Ingress[0].Ports[0].EndPort = ptr[int32](7000)
	bad.Spec.Ingress[0].From = []networkingv1.NetworkPolicyPeer{
		{},
		{PodSelector: &metav1.LabelSelector{}, IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"192.168.0.0/16"}}},
	}
	bad.Spec.PolicyTypes = []networkingv1.PolicyType{"Sideways"}
	expectErrs(t, ValidateCreate(bad), invalid("spec.ingress[0].ports[0].endPort"), required("spec.ingress[0].from[0]"),
		forbidden("spec.ingress[0].from[1]"), invalid("spec.ingress[0].from[1].ipBlock.except[0]"), notSup("spec.policyTypes[0]"))
}

func TestServiceCIDRAndIPAddress(t *testing.T) {
	sc := &networkingv1.ServiceCIDR{ObjectMeta: clusterMeta("kubernetes"), Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/12"}}}
	t.Run("servicecidr valid", func(t *testing.T) { expectErrs(t, ValidateCreate(sc)) })
	t.Run("servicecidr limits", func(t *testing.T) {
		bad := sc.DeepCopy()
		bad.Spec.CIDRs = []string{"10.96.0.0/12", "10.0.0.0/16"}
		expectErrs(t, ValidateCreate(bad), invalid("spec.cidrs"))
		bad.Spec.CIDRs = []string{"a", "b", "c"}
		expectErrs(t, ValidateCreate(bad), invalid("spec.cidrs"))
		bad.Spec.CIDRs = nil
		expectErrs(t, ValidateCreate(bad), required("spec.cidrs"))
	})
	t.Run("servicecidr immutable except dual-stack upgrade", func(t *testing.T) {
		old := sc.DeepCopy()
		stored(&old.ObjectMeta)
		up := old.DeepCopy()
		up.Spec.CIDRs = append(up.Spec.CIDRs, "fd00:10:96::/112")
		expectErrs(t, ValidateUpdate(up, old))
		moved := old.DeepCopy()
		moved.Spec.CIDRs = []string{"10.100.0.0/16"}
		expectErrs(t, ValidateUpdate(moved, old), invalid("spec.cidrs"))
	})
	ip := &networkingv1.IPAddress{ObjectMeta: clusterMeta("10.96.0.10"), Spec: networkingv1.IPAddressSpec{
		ParentRef: &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "web"}}}
	t.Run("ipaddress valid", func(t *testing.T) { expectErrs(t, ValidateCreate(ip)) })
	t.Run("ipaddress name canonical and parent required", func(t *testing.T) {
		bad := ip.DeepCopy()
		bad.Name = "2001:db8:0::1"
		bad.Spec.ParentRef = nil
		expectErrs(t, ValidateCreate(bad), invalid("metadata.name"), required("spec.parentRef"))
	})
	t.Run("ipaddress immutable", func(t *testing.T) {
		old := ip.DeepCopy()
		stored(&old.ObjectMeta)
		n := old.DeepCopy()
		n.Spec.ParentRef.Name = "other"
		expectErrs(t, ValidateUpdate(n, old), invalid("spec"))
	})
}

func TestEndpointSlice(t *testing.T) {
	es := &discoveryv1.EndpointSlice{ObjectMeta: meta("web-abc"), AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.1.2.3"}, NodeName: ptr("node-1")}},
		Ports:     []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr[int32](80), Protocol: ptr(corev1.ProtocolTCP)}},
	}
	t.Run("valid", func(t *testing.T) { expectErrs(t, ValidateCreate(es)) })
	t.Run("addresses and ports", func(t *testing.T) {
		bad := es.DeepCopy()
		bad.Endpoints = append(bad.Endpoints, discoveryv1.Endpoint{Addresses: []string{"fd00::1"}}, discoveryv1.Endpoint{})
		bad.Ports = append(bad.Ports, discoveryv1.EndpointPort{Name: ptr("http"), Protocol: ptr(corev1.ProtocolTCP), Port: ptr[int32](0)})
		expectErrs(t, ValidateCreate(bad), invalid("endpoints[1].addresses[0]"), required("endpoints[2].addresses"),
			dup("ports[1].name"), invalid("ports[1].port"))
	})
	t.Run("at most 1000 endpoints", func(t *testing.T) {
		bad := es.DeepCopy()
		for len(bad.Endpoints) <= maxSliceEndpoints {
			bad.Endpoints = append(bad.Endpoints, es.Endpoints[0])
		}
		expectErrs(t, ValidateCreate(bad), tooMany("endpoints"))
	})
	t.Run("addressType immutable", func(t *testing.T) {
		old := es.DeepCopy()
		stored(&old.ObjectMeta)
		n := old.DeepCopy()
		n.AddressType = discoveryv1.AddressTypeFQDN
		n.Endpoints[0].Addresses = []string{"web.example.com"}
		expectErrs(t, ValidateUpdate(n, old), invalid("addressType"))
	})
}
