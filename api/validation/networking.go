package validation

import (
	"fmt"
	"net/netip"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*networkingv1.Ingress]{
		spec: ingressRules,
		statusChange: func(in, old *networkingv1.Ingress) field.ErrorList {
			return ingressStatus(&in.Status)
		},
	})
	register(&kind[*networkingv1.IngressClass]{cluster: true, spec: ingressClassRules, change: func(ic, old *networkingv1.IngressClass) field.ErrorList {
		return immutable(ic.Spec.Controller, old.Spec.Controller, specPath.Child("controller"))
	}})
	register(&kind[*networkingv1.NetworkPolicy]{spec: networkPolicyRules})
	register(&kind[*networkingv1.ServiceCIDR]{cluster: true, spec: serviceCIDRRules, change: serviceCIDRChange})
	register(&kind[*networkingv1.IPAddress]{
		cluster: true,
		name:    ipAddressName,
		spec:    ipAddressRules,
		change: func(ip, old *networkingv1.IPAddress) field.ErrorList {
			return immutable(ip.Spec, old.Spec, specPath)
		},
	})
}

var pathTypes = []networkingv1.PathType{networkingv1.PathTypeExact, networkingv1.PathTypePrefix, networkingv1.PathTypeImplementationSpecific}

// invalidPathSequences may not appear in Exact or Prefix paths: proxies
// normalize them differently, which would make matching ambiguous.
var invalidPathSequences = []string{"//", "/./", "/../", "%2f", "%2F"}
var invalidPathSuffixes = []string{"/..", "/."}

func ingressRules(in *networkingv1.Ingress) field.ErrorList {
	var errs field.ErrorList
	spec := &in.Spec
	if len(spec.Rules) == 0 && spec.DefaultBackend == nil {
		errs = append(errs, field.Invalid(specPath.Child("rules"), spec.Rules, "either `defaultBackend` or `rules` must be specified"))
	}
	if spec.DefaultBackend != nil {
		errs = append(errs, ingressBackend(spec.DefaultBackend, specPath.Child("defaultBackend"))...)
	}
	for i, r := range spec.Rules {
		p := specPath.Child("rules").Index(i)
		if r.Host != "" {
			errs = append(errs, ingressHost(r.Host, p.Child("host"))...)
		}
		if r.HTTP == nil {
			continue
		}
		pathsPath := p.Child("http", "paths")
		if len(r.HTTP.Paths) == 0 {
			errs = append(errs, field.Required(pathsPath, ""))
		}
		for j, hp := range r.HTTP.Paths {
			errs = append(errs, httpIngressPath(&hp, pathsPath.Index(j))...)
		}
	}
	for i, t := range spec.TLS {
		for j, h := range t.Hosts {
			errs = append(errs, ingressHost(h, specPath.Child("tls").Index(i).Child("hosts").Index(j))...)
		}
	}
	if spec.IngressClassName != nil {
		errs = append(errs, dns1123Subdomain(*spec.IngressClassName, specPath.Child("ingressClassName"))...)
	}
	return errs
}

// ingressHost accepts DNS names, with one leading wildcard label, but not
// IP addresses.
func ingressHost(host string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, err := netip.ParseAddr(host); err == nil {
		errs = append(errs, field.Invalid(fldPath, host, "must be a DNS name, not an IP address"))
	}
	if strings.Contains(host, "*") {
		errs = append(errs, each(fldPath, host, validation.IsWildcardDNS1123Subdomain(host))...)
	} else {
		errs = append(errs, dns1123Subdomain(host, fldPath)...)
	}
	return errs
}

func httpIngressPath(hp *networkingv1.HTTPIngressPath, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if hp.PathType == nil {
		errs = append(errs, field.Required(fldPath.Child("pathType"), "pathType must be specified"))
	} else {
		errs = append(errs, enum(*hp.PathType, fldPath.Child("pathType"), pathTypes...)...)
		switch *hp.PathType {
		case networkingv1.PathTypeExact, networkingv1.PathTypePrefix:
			pp := fldPath.Child("path")
			if !strings.HasPrefix(hp.Path, "/") {
				errs = append(errs, field.Invalid(pp, hp.Path, "must be an absolute path"))
			}
			for _, seq := range invalidPathSequences {
				if strings.Contains(hp.Path, seq) {
					errs = append(errs, field.Invalid(pp, hp.Path, fmt.Sprintf("must not contain '%s'", seq)))
				}
			}
			for _, suf := range invalidPathSuffixes {
				if strings.HasSuffix(hp.Path, suf) {
					errs = append(errs, field.Invalid(pp, hp.Path, fmt.Sprintf("cannot end with '%s'", suf)))
				}
			}
		case networkingv1.PathTypeImplementationSpecific:
			if hp.Path != "" && !strings.HasPrefix(hp.Path, "/") {
				errs = append(errs, field.Invalid(fldPath.Child("path"), hp.Path, "must be an absolute path"))
			}
		}
	}
	errs = append(errs, ingressBackend(&hp.Backend, fldPath.Child("backend"))...)
	return errs
}

func ingressBackend(b *networkingv1.IngressBackend, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case b.Service != nil && b.Resource != nil:
		return field.ErrorList{field.Invalid(fldPath, "", "cannot set both resource and service backends")}
	case b.Resource != nil:
		if b.Resource.Kind == "" {
			errs = append(errs, field.Required(fldPath.Child("resource", "kind"), ""))
		}
		if b.Resource.Name == "" {
			errs = append(errs, field.Required(fldPath.Child("resource", "name"), ""))
		}
		if b.Resource.APIGroup != nil && *b.Resource.APIGroup != "" {
			errs = append(errs, dns1123Subdomain(*b.Resource.APIGroup, fldPath.Child("resource", "apiGroup"))...)
		}
	case b.Service != nil:
		sp := fldPath.Child("service")
		if b.Service.Name == "" {
			errs = append(errs, field.Required(sp.Child("name"), ""))
		} else {
			errs = append(errs, dns1035Label(b.Service.Name, sp.Child("name"))...)
		}
		port, pp := b.Service.Port, sp.Child("port")
		switch {
		case port.Name != "" && port.Number != 0:
			errs = append(errs, field.Invalid(pp, port, "cannot set both port name & port number"))
		case port.Name != "":
			errs = append(errs, each(pp.Child("name"), port.Name, validation.IsValidPortName(port.Name))...)
		case port.Number != 0:
			errs = append(errs, portNum(port.Number, pp.Child("number"))...)
		default:
			errs = append(errs, field.Required(pp, "port name or number is required"))
		}
	default:
		errs = append(errs, field.Invalid(fldPath, "", "resource or service backend is required"))
	}
	return errs
}

func ingressStatus(st *networkingv1.IngressStatus) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("status", "loadBalancer", "ingress")
	for i, in := range st.LoadBalancer.Ingress {
		ip := p.Index(i)
		if in.IP != "" {
			errs = append(errs, validation.IsValidIPForLegacyField(ip.Child("ip"), in.IP, true, nil)...)
		}
		if in.Hostname != "" {
			errs = append(errs, dns1123Subdomain(in.Hostname, ip.Child("hostname"))...)
			if _, err := netip.ParseAddr(in.Hostname); err == nil {
				errs = append(errs, field.Invalid(ip.Child("hostname"), in.Hostname, "must be a DNS name, not an IP address"))
			}
		}
		for j, port := range in.Ports {
			pp := ip.Child("ports").Index(j)
			errs = append(errs, portNum(port.Port, pp.Child("port"))...)
			errs = append(errs, enum(port.Protocol, pp.Child("protocol"), supportedProtocols...)...)
		}
	}
	return errs
}

const maxIngressClassControllerLen = 250

var ingressClassScopes = []string{networkingv1.IngressClassParametersReferenceScopeNamespace, networkingv1.IngressClassParametersReferenceScopeCluster}

func ingressClassRules(ic *networkingv1.IngressClass) field.ErrorList {
	var errs field.ErrorList
	cp := specPath.Child("controller")
	switch {
	case ic.Spec.Controller == "":
		errs = append(errs, field.Required(cp, ""))
	case len(ic.Spec.Controller) > maxIngressClassControllerLen:
		errs = append(errs, field.TooLong(cp, "", maxIngressClassControllerLen))
	default:
		errs = append(errs, validation.IsDomainPrefixedPath(cp, ic.Spec.Controller)...)
	}
	if par := ic.Spec.Parameters; par != nil {
		p := specPath.Child("parameters")
		if par.Kind == "" {
			errs = append(errs, field.Required(p.Child("kind"), ""))
		}
		if par.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		}
		if par.APIGroup != nil && *par.APIGroup != "" {
			errs = append(errs, dns1123Subdomain(*par.APIGroup, p.Child("apiGroup"))...)
		}
		if par.Scope == nil {
			errs = append(errs, field.Required(p.Child("scope"), ""))
		} else {
			errs = append(errs, enum(*par.Scope, p.Child("scope"), ingressClassScopes...)...)
			switch {
			case *par.Scope == networkingv1.IngressClassParametersReferenceScopeNamespace && par.Namespace == nil:
				errs = append(errs, field.Required(p.Child("namespace"), "`parameters.scope` is set to 'Namespace'"))
			case *par.Scope == networkingv1.IngressClassParametersReferenceScopeCluster && par.Namespace != nil:
				errs = append(errs, field.Forbidden(p.Child("namespace"), "`parameters.scope` is set to 'Cluster'"))
			case par.Namespace != nil:
				errs = append(errs, dns1123Label(*par.Namespace, p.Child("namespace"))...)
			}
		}
	}
	return errs
}

var policyTypes = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}

func networkPolicyRules(np *networkingv1.NetworkPolicy) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, labelSelector(&np.Spec.PodSelector, specPath.Child("podSelector"))...)
	for i, r := range np.Spec.Ingress {
		p := specPath.Child("ingress").Index(i)
		errs = append(errs, networkPolicyPorts(r.Ports, p.Child("ports"))...)
		for j, peer := range r.From {
			errs = append(errs, networkPolicyPeer(&peer, p.Child("from").Index(j))...)
		}
	}
	for i, r := range np.Spec.Egress {
		p := specPath.Child("egress").Index(i)
		errs = append(errs, networkPolicyPorts(r.Ports, p.Child("ports"))...)
		for j, peer := range r.To {
			errs = append(errs, networkPolicyPeer(&peer, p.Child("to").Index(j))...)
		}
	}
	tp := specPath.Child("policyTypes")
	for i, t := range np.Spec.PolicyTypes {
		errs = append(errs, enum(t, tp.Index(i), policyTypes...)...)
	}
	if len(np.Spec.PolicyTypes) > len(policyTypes) {
		errs = append(errs, field.Invalid(tp, np.Spec.PolicyTypes, "may not specify more than two policyTypes"))
	}
	return errs
}

func networkPolicyPorts(ports []networkingv1.NetworkPolicyPort, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, port := range ports {
		p := fldPath.Index(i)
		if port.Protocol != nil {
			errs = append(errs, enum(*port.Protocol, p.Child("protocol"), supportedProtocols...)...)
		}
		if port.Port != nil {
			errs = append(errs, portNumOrName(*port.Port, p.Child("port"))...)
		}
		if port.EndPort == nil {
			continue
		}
		ep := p.Child("endPort")
		switch {
		case port.Port == nil:
			errs = append(errs, field.Required(p.Child("port"), "must be specified when endPort is specified"))
		case port.Port.Type == intstr.String:
			errs = append(errs, field.Forbidden(ep, "may not be specified when `port` is non-numeric"))
		case *port.EndPort < port.Port.IntVal:
			errs = append(errs, field.Invalid(ep, *port.EndPort, "must be greater than or equal to `port`"))
		default:
			errs = append(errs, portNum(*port.EndPort, ep)...)
		}
	}
	return errs
}

func networkPolicyPeer(peer *networkingv1.NetworkPolicyPeer, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	if peer.PodSelector != nil {
		n++
		errs = append(errs, labelSelector(peer.PodSelector, fldPath.Child("podSelector"))...)
	}
	if peer.NamespaceSelector != nil {
		n++
		errs = append(errs, labelSelector(peer.NamespaceSelector, fldPath.Child("namespaceSelector"))...)
	}
	if peer.IPBlock != nil {
		if n > 0 {
			errs = append(errs, field.Forbidden(fldPath, "may not specify both ipBlock and another peer"))
		}
		n++
		errs = append(errs, ipBlock(peer.IPBlock, fldPath.Child("ipBlock"))...)
	}
	if n == 0 {
		errs = append(errs, field.Required(fldPath, "must specify a peer"))
	}
	return errs
}

func ipBlock(b *networkingv1.IPBlock, fldPath *field.Path) field.ErrorList {
	cp := fldPath.Child("cidr")
	if b.CIDR == "" {
		return field.ErrorList{field.Required(cp, "")}
	}
	errs := validation.IsValidCIDRForLegacyField(cp, b.CIDR, true, nil)
	outer, err := netip.ParsePrefix(b.CIDR)
	for i, ex := range b.Except {
		ep := fldPath.Child("except").Index(i)
		exErrs := validation.IsValidCIDRForLegacyField(ep, ex, true, nil)
		errs = append(errs, exErrs...)
		if len(exErrs) > 0 || err != nil {
			continue
		}
		inner, perr := netip.ParsePrefix(ex)
		if perr != nil || inner.Bits() <= outer.Bits() || !outer.Contains(inner.Addr()) {
			errs = append(errs, field.Invalid(ep, ex, "must be a strict subset of `cidr`"))
		}
	}
	return errs
}

func serviceCIDRRules(sc *networkingv1.ServiceCIDR) field.ErrorList {
	var errs field.ErrorList
	p := specPath.Child("cidrs")
	cidrs := sc.Spec.CIDRs
	switch {
	case len(cidrs) == 0:
		return field.ErrorList{field.Required(p, "at least one CIDR required")}
	case len(cidrs) > 2:
		return field.ErrorList{field.Invalid(p, cidrs, "may only hold up to 2 values")}
	}
	for i, c := range cidrs {
		errs = append(errs, validation.IsValidCIDR(p.Index(i), c)...)
	}
	if len(errs) == 0 && len(cidrs) == 2 && cidrFamily(cidrs[0]) == cidrFamily(cidrs[1]) {
		errs = append(errs, field.Invalid(p, cidrs, "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"))
	}
	return errs
}

// serviceCIDRChange keeps existing ranges; a single-stack range may only
// gain a second range of the other family.
func serviceCIDRChange(sc, old *networkingv1.ServiceCIDR) field.ErrorList {
	p := specPath.Child("cidrs")
	if len(old.Spec.CIDRs) == 1 && len(sc.Spec.CIDRs) == 2 && sc.Spec.CIDRs[0] == old.Spec.CIDRs[0] {
		return nil
	}
	return immutable(sc.Spec.CIDRs, old.Spec.CIDRs, p)
}

// ipAddressName requires an IPAddress to be named by its address, written
// canonically so that one address has exactly one object.
func ipAddressName(name string, prefix bool) []string {
	ip, err := netip.ParseAddr(name)
	if err != nil {
		return []string{err.Error()}
	}
	if ip.String() != name {
		return []string{"must be a canonical format IP address"}
	}
	return nil
}

func ipAddressRules(ip *networkingv1.IPAddress) field.ErrorList {
	ref, p := ip.Spec.ParentRef, specPath.Child("parentRef")
	if ref == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	if ref.Group != "" {
		errs = append(errs, dns1123Subdomain(ref.Group, p.Child("group"))...)
	}
	if ref.Resource == "" {
		errs = append(errs, field.Required(p.Child("resource"), ""))
	} else {
		errs = append(errs, each(p.Child("resource"), ref.Resource, pathSegmentMsgs(ref.Resource))...)
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else {
		errs = append(errs, each(p.Child("name"), ref.Name, pathSegmentMsgs(ref.Name))...)
	}
	if ref.Namespace != "" {
		errs = append(errs, dns1123Label(ref.Namespace, p.Child("namespace"))...)
	}
	return errs
}

// pathSegmentMsgs rejects names that cannot be a URL path segment.
func pathSegmentMsgs(name string) []string {
	if name == "." || name == ".." {
		return []string{fmt.Sprintf("may not be '%s'", name)}
	}
	for _, bad := range []string{"/", "%"} {
		if strings.Contains(name, bad) {
			return []string{fmt.Sprintf("may not contain '%s'", bad)}
		}
	}
	return nil
}
