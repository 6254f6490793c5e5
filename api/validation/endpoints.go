package validation

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*corev1.Endpoints]{spec: endpointsRules})
	register(&kind[*discoveryv1.EndpointSlice]{spec: endpointSliceRules, change: endpointSliceChange})
}

// Bounds on EndpointSlices, which keep each slice small enough to watch.
const (
	maxSliceEndpoints = 1000
	maxSliceAddresses = 100
	maxSlicePorts     = 100
)

func endpointsRules(ep *corev1.Endpoints) field.ErrorList {
	var errs field.ErrorList
	for i, ss := range ep.Subsets {
		p := field.NewPath("subsets").Index(i)
		if len(ss.Addresses) == 0 && len(ss.NotReadyAddresses) == 0 {
			errs = append(errs, field.Required(p, "must specify `addresses` or `notReadyAddresses`"))
		}
		for j, a := range ss.Addresses {
			errs = append(errs, endpointAddress(a, p.Child("addresses").Index(j))...)
		}
		for j, a := range ss.NotReadyAddresses {
			errs = append(errs, endpointAddress(a, p.Child("notReadyAddresses").Index(j))...)
		}
		names := sets.New[string]()
		for j, port := range ss.Ports {
			pp := p.Child("ports").Index(j)
			if len(ss.Ports) > 1 && port.Name == "" {
				errs = append(errs, field.Required(pp.Child("name"), ""))
			} else if port.Name != "" {
				errs = append(errs, dns1123Label(port.Name, pp.Child("name"))...)
				if names.Has(port.Name) {
					errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
				}
				names.Insert(port.Name)
			}
			errs = append(errs, portNum(port.Port, pp.Child("port"))...)
			errs = append(errs, enum(port.Protocol, pp.Child("protocol"), supportedProtocols...)...)
			if port.AppProtocol != nil {
				errs = append(errs, qualifiedName(*port.AppProtocol, pp.Child("appProtocol"))...)
			}
		}
	}
	return errs
}

func endpointAddress(a corev1.EndpointAddress, fldPath *field.Path) field.ErrorList {
	errs := validation.IsValidIPForLegacyField(fldPath.Child("ip"), a.IP, true, nil)
	if len(errs) == 0 {
		errs = append(errs, nonSpecialIP(a.IP, fldPath.Child("ip"))...)
	}
	if a.Hostname != "" {
		errs = append(errs, dns1123Label(a.Hostname, fldPath.Child("hostname"))...)
	}
	if a.NodeName != nil {
		errs = append(errs, dns1123Subdomain(*a.NodeName, fldPath.Child("nodeName"))...)
	}
	return errs
}

var sliceAddressTypes = []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN}

func endpointSliceRules(es *discoveryv1.EndpointSlice) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, enum(es.AddressType, field.NewPath("addressType"), sliceAddressTypes...)...)
	epPath := field.NewPath("endpoints")
	if len(es.Endpoints) > maxSliceEndpoints {
		errs = append(errs, field.TooMany(epPath, len(es.Endpoints), maxSliceEndpoints))
	}
	for i, ep := range es.Endpoints {
		p := epPath.Index(i)
		ap := p.Child("addresses")
		switch {
		case len(ep.Addresses) == 0:
			errs = append(errs, field.Required(ap, "must contain at least 1 address"))
		case len(ep.Addresses) > maxSliceAddresses:
			errs = append(errs, field.TooMany(ap, len(ep.Addresses), maxSliceAddresses))
		}
		for j, addr := range ep.Addresses {
			errs = append(errs, sliceAddress(es.AddressType, addr, ap.Index(j))...)
		}
		if ep.NodeName != nil {
			errs = append(errs, dns1123Subdomain(*ep.NodeName, p.Child("nodeName"))...)
		}
		if ep.Hostname != nil {
			errs = append(errs, dns1123Label(*ep.Hostname, p.Child("hostname"))...)
		}
		errs = append(errs, metav1validation.ValidateLabels(ep.DeprecatedTopology, p.Child("deprecatedTopology"))...)
		if ep.Hints != nil {
			for j, z := range ep.Hints.ForZones {
				if z.Name == "" {
					errs = append(errs, field.Required(p.Child("hints", "forZones").Index(j).Child("name"), ""))
				}
			}
			for j, n := range ep.Hints.ForNodes {
				errs = append(errs, dns1123Subdomain(n.Name, p.Child("hints", "forNodes").Index(j).Child("name"))...)
			}
		}
	}
	portsPath := field.NewPath("ports")
	if len(es.Ports) > maxSlicePorts {
		errs = append(errs, field.TooMany(portsPath, len(es.Ports), maxSlicePorts))
	}
	names := sets.New[string]()
	for i, port := range es.Ports {
		p := portsPath.Index(i)
		name := ""
		if port.Name != nil {
			name = *port.Name
		}
		if name != "" {
			errs = append(errs, dns1123Label(name, p.Child("name"))...)
		}
		if names.Has(name) {
			errs = append(errs, field.Duplicate(p.Child("name"), name))
		}
		names.Insert(name)
		if port.Protocol == nil {
			errs = append(errs, field.Required(p.Child("protocol"), ""))
		} else {
			errs = append(errs, enum(*port.Protocol, p.Child("protocol"), supportedProtocols...)...)
		}
		if port.Port != nil {
			errs = append(errs, portNum(*port.Port, p.Child("port"))...)
		}
		if port.AppProtocol != nil {
			errs = append(errs, qualifiedName(*port.AppProtocol, p.Child("appProtocol"))...)
		}
	}
	return errs
}

func sliceAddress(t discoveryv1.AddressType, addr string, fldPath *field.Path) field.ErrorList {
	switch t {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
		if errs := validation.IsValidIPForLegacyField(fldPath, addr, true, nil); len(errs) > 0 {
			return errs
		}
		ip, err := netip.ParseAddr(addr)
		if err != nil {
			return nil
		}
		if is4 := ip.Unmap().Is4(); is4 != (t == discoveryv1.AddressTypeIPv4) {
			return field.ErrorList{field.Invalid(fldPath, addr, fmt.Sprintf("must be an %s address", t))}
		}
		return nil
	case discoveryv1.AddressTypeFQDN:
		return validation.IsFullyQualifiedDomainName(fldPath, addr)
	}
	return nil
}

func endpointSliceChange(es, old *discoveryv1.EndpointSlice) field.ErrorList {
	return immutable(es.AddressType, old.AddressType, field.NewPath("addressType"))
}
