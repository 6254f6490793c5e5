package model

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
)

// Family is the IP family a proxy instance programs.
type Family int

// The two IP families.
const (
	IPv4 Family = iota
	IPv6
)

// String is "IPv4" or "IPv6", as Kubernetes names the families.
func (f Family) String() string {
	if f == IPv6 {
		return "IPv6"
	}
	return "IPv4"
}

func (f Family) has(a netip.Addr) bool {
	return a.IsValid() && (a.Is4() || a.Is4In6()) == (f == IPv4)
}

func (f Family) addressType() discovery.AddressType {
	if f == IPv4 {
		return discovery.AddressTypeIPv4
	}
	return discovery.AddressTypeIPv6
}

// Skip is an object, or part of one, left out of the model, with why.
type Skip struct {
	Object string
	Reason string
	// Ref names the object for an Event; EventReason is the Event's
	// reason, "" when the skip is only logged (a slice of the family this
	// node does not proxy is normal in a dual-stack cluster).
	Ref         v1.ObjectReference
	EventReason string
	// OtherFamily marks the skip of a slice of the other IP family, which
	// a dual-stack proxy hands to its other family instead.
	OtherFamily bool
}

func serviceRef(svc *v1.Service) v1.ObjectReference {
	return v1.ObjectReference{Kind: "Service", APIVersion: "v1", Namespace: svc.Namespace, Name: svc.Name, UID: svc.UID}
}

func sliceRef(es *discovery.EndpointSlice) v1.ObjectReference {
	return v1.ObjectReference{Kind: "EndpointSlice", APIVersion: "discovery.k8s.io/v1", Namespace: es.Namespace, Name: es.Name, UID: es.UID}
}

func parseAddrs(f Family, ss []string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		if a, err := netip.ParseAddr(s); err == nil && f.has(a) {
			out = append(out, a.Unmap())
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return slices.Compact(out)
}

// Build turns a Service and the EndpointSlices that name it into the
// ServicePorts of family f. Services the proxy has nothing to do for
// (ExternalName, headless, no ClusterIP of the family) give none; ports
// with a protocol it cannot proxy, and slices of another address type, are
// skipped and reported.
func Build(svc *v1.Service, eps []*discovery.EndpointSlice, nodeName string, f Family) ([]*ServicePort, []Skip) {
	if svc.Spec.Type == v1.ServiceTypeExternalName || svc.Spec.ClusterIP == v1.ClusterIPNone || svc.Spec.ClusterIP == "" {
		return nil, nil
	}
	clusterIPs := svc.Spec.ClusterIPs
	if len(clusterIPs) == 0 {
		clusterIPs = []string{svc.Spec.ClusterIP}
	}
	cips := parseAddrs(f, clusterIPs)
	if len(cips) == 0 {
		return nil, nil
	}
	obj := fmt.Sprintf("Service %s/%s", svc.Namespace, svc.Name)
	var skips []Skip
	var lbIPs []string
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if ing.IP != "" {
			lbIPs = append(lbIPs, ing.IP)
		}
	}
	base := ServicePort{
		ClusterIP:       cips[0],
		ExternalIPs:     parseAddrs(f, svc.Spec.ExternalIPs),
		LoadBalancerIPs: parseAddrs(f, lbIPs),
		InternalLocal:   svc.Spec.InternalTrafficPolicy != nil && *svc.Spec.InternalTrafficPolicy == v1.ServiceInternalTrafficPolicyLocal,
	}
	if svc.Spec.Type == v1.ServiceTypeLoadBalancer {
		for _, r := range svc.Spec.LoadBalancerSourceRanges {
			pfx, err := netip.ParsePrefix(strings.TrimSpace(r))
			if err != nil {
				skips = append(skips, Skip{Object: obj, Reason: fmt.Sprintf("loadBalancerSourceRanges: %q is not a CIDR", r),
					Ref: serviceRef(svc), EventReason: "InvalidSourceRange"})
				continue
			}
			if pfx.Addr().Is4() == (f == IPv4) {
				base.LoadBalancerSourceRanges = append(base.LoadBalancerSourceRanges, pfx.Masked())
			}
		}
	}
	externallyReachable := svc.Spec.Type == v1.ServiceTypeNodePort || svc.Spec.Type == v1.ServiceTypeLoadBalancer || len(base.ExternalIPs) > 0
	if externallyReachable && svc.Spec.ExternalTrafficPolicy == v1.ServiceExternalTrafficPolicyLocal {
		base.ExternalLocal = true
		base.HealthCheckNodePort = svc.Spec.HealthCheckNodePort
	}
	if svc.Spec.SessionAffinity == v1.ServiceAffinityClientIP {
		base.AffinityTimeout = v1.DefaultClientIPServiceAffinitySeconds
		if c := svc.Spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil {
			base.AffinityTimeout = *c.ClientIP.TimeoutSeconds
		}
	}
	var out []*ServicePort
	for _, p := range svc.Spec.Ports {
		switch p.Protocol {
		case v1.ProtocolTCP, v1.ProtocolUDP, v1.ProtocolSCTP:
		default:
			skips = append(skips, Skip{Object: obj, Reason: fmt.Sprintf("port %q: unsupported protocol %q", p.Name, p.Protocol),
				Ref: serviceRef(svc), EventReason: "UnsupportedProtocol"})
			continue
		}
		sp := base
		sp.Name = ServicePortName{NamespacedName: NamespacedNameOf(svc), Port: p.Name, Protocol: p.Protocol}
		sp.Port = p.Port
		sp.Protocol = p.Protocol
		if svc.Spec.Type == v1.ServiceTypeNodePort || svc.Spec.Type == v1.ServiceTypeLoadBalancer {
			sp.NodePort = p.NodePort
		}
		var s []Skip
		sp.Endpoints, s = endpointsFor(eps, p.Name, p.Protocol, nodeName, f)
		skips = append(skips, s...)
		out = append(out, &sp)
	}
	return out, skips
}

func endpointsFor(slices_ []*discovery.EndpointSlice, portName string, proto v1.Protocol, nodeName string, f Family) ([]Endpoint, []Skip) {
	var out []Endpoint
	var skips []Skip
	for _, es := range slices_ {
		if es.AddressType != f.addressType() {
			if es.AddressType != discovery.AddressTypeIPv4 && es.AddressType != discovery.AddressTypeIPv6 {
				skips = append(skips, Skip{Object: "EndpointSlice " + es.Namespace + "/" + es.Name, Reason: fmt.Sprintf("unsupported address type %q", es.AddressType),
					Ref: sliceRef(es), EventReason: "UnsupportedAddressType"})
			} else {
				skips = append(skips, Skip{Object: "EndpointSlice " + es.Namespace + "/" + es.Name,
					Reason: fmt.Sprintf("address type %s is not the family this proxy serves (%s)", es.AddressType, f.addressType()), Ref: sliceRef(es),
					OtherFamily: true})
			}
			continue
		}
		var port int32
		found := false
		for _, p := range es.Ports {
			pn := ""
			if p.Name != nil {
				pn = *p.Name
			}
			pp := v1.ProtocolTCP
			if p.Protocol != nil {
				pp = *p.Protocol
			}
			if pn == portName && pp == proto && p.Port != nil {
				port, found = *p.Port, true
				break
			}
		}
		if !found {
			continue
		}
		for _, e := range es.Endpoints {
			if len(e.Addresses) == 0 {
				continue
			}
			ip, err := netip.ParseAddr(e.Addresses[0])
			if err != nil || !f.has(ip) {
				skips = append(skips, Skip{Object: "EndpointSlice " + es.Namespace + "/" + es.Name, Reason: fmt.Sprintf("address %q is not an %s address", e.Addresses[0], es.AddressType),
					Ref: sliceRef(es), EventReason: "InvalidAddress"})
				continue
			}
			ready := e.Conditions.Ready == nil || *e.Conditions.Ready
			serving := ready
			if e.Conditions.Serving != nil {
				serving = *e.Conditions.Serving
			}
			terminating := e.Conditions.Terminating != nil && *e.Conditions.Terminating
			out = append(out, Endpoint{
				IP: ip.Unmap(), Port: port,
				Ready: ready, Serving: serving, Terminating: terminating,
				Local:  e.NodeName != nil && *e.NodeName == nodeName,
				Remote: e.NodeName != nil && *e.NodeName != nodeName,
			})
		}
	}
	// The same endpoint may appear in two slices while the controller moves
	// it; keep one, preferring the ready copy.
	slices.SortFunc(out, func(a, b Endpoint) int {
		if c := a.IP.Compare(b.IP); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Port, b.Port); c != 0 {
			return c
		}
		if a.Ready != b.Ready {
			if a.Ready {
				return -1
			}
			return 1
		}
		return 0
	})
	out = slices.CompactFunc(out, func(a, b Endpoint) bool { return a.IP == b.IP && a.Port == b.Port })
	return out, skips
}
