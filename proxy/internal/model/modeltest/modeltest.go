// Package modeltest holds the model the back ends' golden tests render.
package modeltest

import (
	"net/netip"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"trireme.dev/proxy/internal/model"
)

func name(ns, n, port string, proto v1.Protocol) model.ServicePortName {
	return model.ServicePortName{NamespacedName: types.NamespacedName{Namespace: ns, Name: n}, Port: port, Protocol: proto}
}

func ep(ip string, port int32, ready, local bool) model.Endpoint {
	return model.Endpoint{IP: netip.MustParseAddr(ip), Port: port, Ready: ready, Serving: ready, Local: local}
}

// State returns a model exercising every kind of rule: plain ClusterIPs
// over TCP and UDP, ready and terminating endpoints, a Service without
// endpoints and a NodePort, externalTrafficPolicy Local with external and
// load-balancer IPs, ClientIP affinity, internalTrafficPolicy Local
// without local endpoints.
func State() model.State {
	terminating := ep("10.244.2.9", 8080, false, false)
	terminating.Serving, terminating.Terminating = true, true
	ports := []*model.ServicePort{{
		Name: name("default", "web", "http", v1.ProtocolTCP), ClusterIP: netip.MustParseAddr("10.96.0.10"), Port: 80, Protocol: v1.ProtocolTCP,
		Endpoints: []model.Endpoint{ep("10.244.1.5", 8080, true, true), ep("10.244.2.7", 8080, true, false), ep("10.244.2.8", 8080, false, false), terminating},
	}, {
		Name: name("kube-system", "dns", "dns", v1.ProtocolUDP), ClusterIP: netip.MustParseAddr("10.96.0.53"), Port: 53, Protocol: v1.ProtocolUDP,
		Endpoints: []model.Endpoint{ep("10.244.1.3", 53, true, true), ep("10.244.2.3", 53, true, false)},
	}, {
		Name: name("default", "empty", "", v1.ProtocolTCP), ClusterIP: netip.MustParseAddr("10.96.0.20"), Port: 80, Protocol: v1.ProtocolTCP, NodePort: 30001,
	}, {
		Name: name("shop", "front", "https", v1.ProtocolTCP), ClusterIP: netip.MustParseAddr("10.96.0.30"), Port: 443, Protocol: v1.ProtocolTCP, NodePort: 30443,
		ExternalIPs: []netip.Addr{netip.MustParseAddr("192.168.50.10")}, LoadBalancerIPs: []netip.Addr{netip.MustParseAddr("203.0.113.7")},
		LoadBalancerSourceRanges: []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("192.0.2.8/32")},
		ExternalLocal:            true, HealthCheckNodePort: 31000,
		Endpoints: []model.Endpoint{ep("10.244.1.20", 8443, true, true), ep("10.244.2.20", 8443, true, false)},
	}, {
		Name: name("shop", "cart", "", v1.ProtocolTCP), ClusterIP: netip.MustParseAddr("10.96.0.40"), Port: 8080, Protocol: v1.ProtocolTCP, NodePort: 30080,
		AffinityTimeout: 600,
		Endpoints:       []model.Endpoint{ep("10.244.1.30", 8080, true, true), ep("10.244.2.30", 8080, true, false)},
	}, {
		Name: name("shop", "local-only", "", v1.ProtocolTCP), ClusterIP: netip.MustParseAddr("10.96.0.50"), Port: 80, Protocol: v1.ProtocolTCP,
		InternalLocal: true,
		Endpoints:     []model.Endpoint{ep("10.244.2.50", 80, true, false)},
	}}
	s := model.State{}
	for _, p := range ports {
		s[p.Name] = p
	}
	return s
}

// Change applies the partial-sync step of the golden tests to s: one
// endpoint of default/web goes away, default/empty gets one, and
// shop/local-only is deleted. It returns the changed names.
func Change(s model.State) map[model.ServicePortName]struct{} {
	web := *s[name("default", "web", "http", v1.ProtocolTCP)]
	web.Endpoints = web.Endpoints[1:]
	s[web.Name] = &web
	empty := *s[name("default", "empty", "", v1.ProtocolTCP)]
	empty.Endpoints = []model.Endpoint{ep("10.244.1.9", 9090, true, true)}
	s[empty.Name] = &empty
	gone := name("shop", "local-only", "", v1.ProtocolTCP)
	delete(s, gone)
	return map[model.ServicePortName]struct{}{web.Name: {}, empty.Name: {}, gone: {}}
}
