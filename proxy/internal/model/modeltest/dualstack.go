package modeltest

import (
	"net/netip"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"trireme.dev/proxy/internal/model"
)

// DualStackNodeIPs are the node's addresses of the dual-stack model, one
// per family.
var DualStackNodeIPs = map[model.Family][]netip.Addr{
	model.IPv4: {netip.MustParseAddr("192.168.1.10")},
	model.IPv6: {netip.MustParseAddr("2001:db8:1::10")},
}

// DualStackCIDR is the dual-stack model's pod network of each family.
var DualStackCIDR = map[model.Family]netip.Prefix{
	model.IPv4: netip.MustParsePrefix("10.244.0.0/16"),
	model.IPv6: netip.MustParsePrefix("fd00:10:244::/56"),
}

// DualStack builds, through model.Build as the proxy does, family f's
// part of a dual-stack LoadBalancer Service (ClusterIPs, external IPs and
// ingress IPs of both families) with an EndpointSlice of each family, and
// a single-stack IPv4 Service that only the IPv4 family proxies.
func DualStack(f model.Family) model.State {
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "dual"},
		Spec: v1.ServiceSpec{
			Type: v1.ServiceTypeLoadBalancer, ClusterIP: "10.96.0.20", ClusterIPs: []string{"10.96.0.20", "fd00:96::20"},
			IPFamilies:  []v1.IPFamily{v1.IPv4Protocol, v1.IPv6Protocol},
			ExternalIPs: []string{"203.0.113.5", "2001:db8:5::5"},
			Ports:       []v1.ServicePort{{Name: "http", Port: 80, Protocol: v1.ProtocolTCP, NodePort: 30080}},
		},
		Status: v1.ServiceStatus{LoadBalancer: v1.LoadBalancerStatus{Ingress: []v1.LoadBalancerIngress{{IP: "198.51.100.7"}, {IP: "2001:db8:7::7"}}}},
	}
	v4only := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "v4only"},
		Spec: v1.ServiceSpec{Type: v1.ServiceTypeClusterIP, ClusterIP: "10.96.0.30", ClusterIPs: []string{"10.96.0.30"},
			Ports: []v1.ServicePort{{Name: "dns", Port: 53, Protocol: v1.ProtocolUDP}}},
	}
	slice := func(svc, name string, at discovery.AddressType, port string, proto v1.Protocol, n int32, ips ...string) *discovery.EndpointSlice {
		es := &discovery.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{discovery.LabelServiceName: svc}},
			AddressType: at,
			Ports:       []discovery.EndpointPort{{Name: ptr.To(port), Port: ptr.To(n), Protocol: ptr.To(proto)}},
		}
		for _, ip := range ips {
			es.Endpoints = append(es.Endpoints, discovery.Endpoint{Addresses: []string{ip}})
		}
		return es
	}
	dualSlices := []*discovery.EndpointSlice{
		slice("dual", "dual-v4", discovery.AddressTypeIPv4, "http", v1.ProtocolTCP, 8080, "10.244.1.5", "10.244.2.6"),
		slice("dual", "dual-v6", discovery.AddressTypeIPv6, "http", v1.ProtocolTCP, 8080, "fd00:10:244:1::5", "fd00:10:244:2::6"),
	}
	v4Slices := []*discovery.EndpointSlice{slice("v4only", "v4only-1", discovery.AddressTypeIPv4, "dns", v1.ProtocolUDP, 53, "10.244.1.7")}
	state := model.State{}
	for _, in := range []struct {
		svc    *v1.Service
		slices []*discovery.EndpointSlice
	}{{svc, dualSlices}, {v4only, v4Slices}} {
		ports, _ := model.Build(in.svc, in.slices, "node", f)
		for _, p := range ports {
			state[p.Name] = p
		}
	}
	return state
}
