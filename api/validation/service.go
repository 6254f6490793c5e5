package validation

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*corev1.Service]{
		name:   apimachineryvalidation.NameIsDNS1035Label,
		spec:   serviceRules,
		change: serviceChange,
		statusChange: func(svc, old *corev1.Service) field.ErrorList {
			return loadBalancerStatus(&svc.Status.LoadBalancer, field.NewPath("status", "loadBalancer"))
		},
	})
}

var serviceTypes = []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeExternalName, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort}
var sessionAffinities = []corev1.ServiceAffinity{corev1.ServiceAffinityClientIP, corev1.ServiceAffinityNone}
var ipFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
var ipFamilyPolicies = []corev1.IPFamilyPolicy{corev1.IPFamilyPolicyPreferDualStack, corev1.IPFamilyPolicyRequireDualStack, corev1.IPFamilyPolicySingleStack}
var externalTrafficPolicies = []corev1.ServiceExternalTrafficPolicy{corev1.ServiceExternalTrafficPolicyCluster, corev1.ServiceExternalTrafficPolicyLocal}
var internalTrafficPolicies = []corev1.ServiceInternalTrafficPolicy{corev1.ServiceInternalTrafficPolicyCluster, corev1.ServiceInternalTrafficPolicyLocal}
var trafficDistributions = []string{corev1.ServiceTrafficDistributionPreferClose, corev1.ServiceTrafficDistributionPreferSameZone, corev1.ServiceTrafficDistributionPreferSameNode}

// maxClientIPAffinitySeconds is one day, upstream's cap on sticky sessions.
const maxClientIPAffinitySeconds = 86400

func isHeadless(svc *corev1.Service) bool {
	return svc.Spec.ClusterIP == corev1.ClusterIPNone
}

// externallyAccessible reports services reachable from outside the
// cluster, the only ones an external traffic policy applies to.
func externallyAccessible(svc *corev1.Service) bool {
	t := svc.Spec.Type
	return t == corev1.ServiceTypeLoadBalancer || t == corev1.ServiceTypeNodePort || (t == corev1.ServiceTypeClusterIP && len(svc.Spec.ExternalIPs) > 0)
}

func needsHealthCheck(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

func serviceRules(svc *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	spec := &svc.Spec
	if len(spec.Ports) == 0 && !isHeadless(svc) && spec.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(specPath.Child("ports"), ""))
	}
	switch spec.Type {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
		if isHeadless(svc) && len(spec.ClusterIPs) > 0 {
			errs = append(errs, field.Invalid(specPath.Child("clusterIPs").Index(0), spec.ClusterIPs[0], fmt.Sprintf("may not be set to 'None' for %s services", spec.Type)))
		}
	case corev1.ServiceTypeExternalName:
		if len(spec.ClusterIPs) > 0 {
			errs = append(errs, field.Forbidden(specPath.Child("clusterIPs"), "may not be set for ExternalName services"))
		}
		if len(spec.IPFamilies) > 0 {
			errs = append(errs, field.Forbidden(specPath.Child("ipFamilies"), "may not be set for ExternalName services"))
		}
		if spec.IPFamilyPolicy != nil {
			errs = append(errs, field.Forbidden(specPath.Child("ipFamilyPolicy"), "may not be set for ExternalName services"))
		}
		// A trailing dot marks the CNAME as fully qualified.
		if cname := strings.TrimSuffix(spec.ExternalName, "."); cname != "" {
			errs = append(errs, dns1123Subdomain(cname, specPath.Child("externalName"))...)
		} else {
			errs = append(errs, field.Required(specPath.Child("externalName"), ""))
		}
	}
	errs = append(errs, servicePorts(svc)...)
	if spec.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabels(spec.Selector, specPath.Child("selector"))...)
	}
	errs = append(errs, enum(spec.SessionAffinity, specPath.Child("sessionAffinity"), sessionAffinities...)...)
	switch spec.SessionAffinity {
	case corev1.ServiceAffinityClientIP:
		errs = append(errs, clientIPAffinity(spec.SessionAffinityConfig, specPath.Child("sessionAffinityConfig"))...)
	case corev1.ServiceAffinityNone:
		if spec.SessionAffinityConfig != nil {
			errs = append(errs, field.Forbidden(specPath.Child("sessionAffinityConfig"), "must not be set when session affinity is None"))
		}
	}
	errs = append(errs, clusterIPFields(svc)...)
	for i, ip := range spec.ExternalIPs {
		p := specPath.Child("externalIPs").Index(i)
		if ipErrs := validation.IsValidIPForLegacyField(p, ip, true, nil); len(ipErrs) > 0 {
			errs = append(errs, ipErrs...)
		} else {
			errs = append(errs, nonSpecialIP(ip, p)...)
		}
	}
	errs = append(errs, enum(spec.Type, specPath.Child("type"), serviceTypes...)...)
	if len(spec.LoadBalancerSourceRanges) > 0 {
		p := specPath.Child("LoadBalancerSourceRanges")
		if spec.Type != corev1.ServiceTypeLoadBalancer {
			errs = append(errs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
		}
		for i, cidr := range spec.LoadBalancerSourceRanges {
			// Space padding is tolerated for values migrated from the
			// annotation.
			errs = append(errs, validation.IsValidCIDRForLegacyField(p.Index(i), strings.TrimSpace(cidr), true, nil)...)
		}
	} else if v, ok := svc.Annotations[corev1.AnnotationLoadBalancerSourceRangesKey]; ok {
		p := metadataPath.Child("annotations").Key(corev1.AnnotationLoadBalancerSourceRangesKey)
		if spec.Type != corev1.ServiceTypeLoadBalancer {
			errs = append(errs, field.Forbidden(p, "may only be used when `type` is 'LoadBalancer'"))
		}
		if v = strings.TrimSpace(v); v != "" {
			for _, cidr := range strings.Split(v, ",") {
				errs = append(errs, validation.IsValidCIDRForLegacyField(p, strings.TrimSpace(cidr), true, nil)...)
			}
		}
	}
	if spec.AllocateLoadBalancerNodePorts != nil && spec.Type != corev1.ServiceTypeLoadBalancer {
		errs = append(errs, field.Forbidden(specPath.Child("allocateLoadBalancerNodePorts"), "may only be used when `type` is 'LoadBalancer'"))
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer && spec.AllocateLoadBalancerNodePorts == nil {
		errs = append(errs, field.Required(specPath.Child("allocateLoadBalancerNodePorts"), ""))
	}
	if spec.LoadBalancerClass != nil {
		if spec.Type == corev1.ServiceTypeLoadBalancer {
			errs = append(errs, qualifiedName(*spec.LoadBalancerClass, specPath.Child("loadBalancerClass"))...)
		} else {
			errs = append(errs, field.Forbidden(specPath.Child("loadBalancerClass"), "may only be used when `type` is 'LoadBalancer'"))
		}
	}
	errs = append(errs, trafficPolicies(svc)...)
	return errs
}

func servicePorts(svc *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	spec := &svc.Spec
	names := sets.New[string]()
	nodePorts := sets.New[string]()
	ports := sets.New[string]()
	for i := range spec.Ports {
		sp, p := &spec.Ports[i], specPath.Child("ports").Index(i)
		if len(spec.Ports) > 1 && sp.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else if sp.Name != "" {
			errs = append(errs, dns1123Label(sp.Name, p.Child("name"))...)
			if names.Has(sp.Name) {
				errs = append(errs, field.Duplicate(p.Child("name"), sp.Name))
			}
			names.Insert(sp.Name)
		}
		errs = append(errs, portNum(sp.Port, p.Child("port"))...)
		errs = append(errs, enum(sp.Protocol, p.Child("protocol"), supportedProtocols...)...)
		errs = append(errs, portNumOrName(sp.TargetPort, p.Child("targetPort"))...)
		if sp.AppProtocol != nil {
			errs = append(errs, qualifiedName(*sp.AppProtocol, p.Child("appProtocol"))...)
		}
		// Whether a node port is free and in the configured range is the
		// allocator's business; validation only bounds the number.
		if sp.NodePort < 0 || sp.NodePort > 65535 {
			errs = append(errs, field.Invalid(p.Child("nodePort"), sp.NodePort, validation.InclusiveRangeError(0, 65535)))
		}
		if spec.Type == corev1.ServiceTypeClusterIP && sp.NodePort != 0 {
			errs = append(errs, field.Forbidden(p.Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
		}
		if sp.NodePort != 0 {
			key := fmt.Sprintf("%s/%d", sp.Protocol, sp.NodePort)
			if nodePorts.Has(key) {
				errs = append(errs, field.Duplicate(p.Child("nodePort"), sp.NodePort))
			}
			nodePorts.Insert(key)
		}
		key := fmt.Sprintf("%s/%d", sp.Protocol, sp.Port)
		if ports.Has(key) {
			errs = append(errs, field.Duplicate(p, corev1.ServicePort{Protocol: sp.Protocol, Port: sp.Port}))
		}
		ports.Insert(key)
	}
	return errs
}

func clientIPAffinity(cfg *corev1.SessionAffinityConfig, fldPath *field.Path) field.ErrorList {
	switch {
	case cfg == nil:
		return field.ErrorList{field.Required(fldPath, "when session affinity type is ClientIP")}
	case cfg.ClientIP == nil:
		return field.ErrorList{field.Required(fldPath.Child("clientIP"), "when session affinity type is ClientIP")}
	case cfg.ClientIP.TimeoutSeconds == nil:
		return field.ErrorList{field.Required(fldPath.Child("clientIP", "timeoutSeconds"), "when session affinity type is ClientIP")}
	}
	if t := *cfg.ClientIP.TimeoutSeconds; t <= 0 || t > maxClientIPAffinitySeconds {
		return field.ErrorList{field.Invalid(fldPath.Child("clientIP", "timeoutSeconds"), t, fmt.Sprintf("must be greater than 0 and less than %d", maxClientIPAffinitySeconds))}
	}
	return nil
}

// nonSpecialIP rejects addresses no service can usefully be reached on.
func nonSpecialIP(ip string, fldPath *field.Path) field.ErrorList {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return nil
	}
	addr = addr.Unmap()
	switch {
	case addr.IsUnspecified():
		return field.ErrorList{field.Invalid(fldPath, ip, "may not be unspecified (0.0.0.0)")}
	case addr.IsLoopback():
		return field.ErrorList{field.Invalid(fldPath, ip, "may not be in the loopback range (127.0.0.0/8, ::1/128)")}
	case addr.IsLinkLocalUnicast():
		return field.ErrorList{field.Invalid(fldPath, ip, "may not be in the link-local range (169.254.0.0/16, fe80::/10)")}
	case addr.IsLinkLocalMulticast():
		return field.ErrorList{field.Invalid(fldPath, ip, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)")}
	}
	return nil
}

// ServiceClusterIPFields checks a Service's clusterIP, clusterIPs,
// ipFamilies and ipFamilyPolicy against each other, as upstream's
// ValidateServiceClusterIPsRelatedFields: the apiserver runs it before it
// allocates addresses, so that allocation only sees well-formed input.
func ServiceClusterIPFields(svc *corev1.Service) field.ErrorList {
	return clusterIPFields(svc)
}

// clusterIPFields checks clusterIP, clusterIPs, ipFamilies and
// ipFamilyPolicy against each other.
func clusterIPFields(svc *corev1.Service) field.ErrorList {
	spec := &svc.Spec
	if spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	var errs field.ErrorList
	ipsPath, famPath, polPath := specPath.Child("clusterIPs"), specPath.Child("ipFamilies"), specPath.Child("ipFamilyPolicy")
	if spec.ClusterIP != "" {
		if len(spec.ClusterIPs) == 0 {
			errs = append(errs, field.Required(ipsPath, ""))
		} else if spec.ClusterIPs[0] != spec.ClusterIP {
			errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "first value must match `clusterIP`"))
		}
	} else if len(spec.ClusterIPs) > 0 {
		errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "must be empty when `clusterIP` is not specified"))
	}
	seen := sets.New[corev1.IPFamily]()
	for i, f := range spec.IPFamilies {
		errs = append(errs, enum(f, famPath.Index(i), ipFamilies...)...)
		if seen.Has(f) {
			errs = append(errs, field.Duplicate(famPath.Index(i), f))
		}
		seen.Insert(f)
	}
	if len(spec.IPFamilies) > 2 {
		errs = append(errs, field.Invalid(famPath, spec.IPFamilies, "may only hold up to 2 values"))
	}
	if spec.IPFamilyPolicy != nil {
		errs = append(errs, enum(*spec.IPFamilyPolicy, polPath, ipFamilyPolicies...)...)
		if *spec.IPFamilyPolicy == corev1.IPFamilyPolicySingleStack && (len(spec.IPFamilies) > 1 || len(spec.ClusterIPs) > 1) {
			errs = append(errs, field.Invalid(polPath, *spec.IPFamilyPolicy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"))
		}
	}
	badIPs := false
	for i, ip := range spec.ClusterIPs {
		if i == 0 && ip == corev1.ClusterIPNone {
			if len(spec.ClusterIPs) > 1 {
				badIPs = true
				errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "'None' must be the first and only value"))
			}
			continue
		}
		ipErrs := validation.IsValidIPForLegacyField(ipsPath.Index(i), ip, true, nil)
		badIPs = badIPs || len(ipErrs) > 0
		errs = append(errs, ipErrs...)
	}
	if len(spec.ClusterIPs) > 2 {
		errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "may only hold up to 2 values"))
	}
	if badIPs {
		// Family checks on unparsable addresses would only add noise.
		return errs
	}
	if len(spec.ClusterIPs) == 2 {
		a, _ := netip.ParseAddr(spec.ClusterIPs[0])
		b, _ := netip.ParseAddr(spec.ClusterIPs[1])
		if a.Unmap().Is4() == b.Unmap().Is4() {
			errs = append(errs, field.Invalid(ipsPath, spec.ClusterIPs, "may specify no more than one IP for each IP family"))
		}
	}
	if !isHeadless(svc) {
		for i, ip := range spec.ClusterIPs {
			if i >= len(spec.IPFamilies) {
				break
			}
			addr, _ := netip.ParseAddr(ip)
			is6 := addr.Is6() && !addr.Is4In6()
			if spec.IPFamilies[i] == corev1.IPv4Protocol && is6 {
				errs = append(errs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv4 value as indicated by `ipFamilies[%v]`", i)))
			}
			if spec.IPFamilies[i] == corev1.IPv6Protocol && !is6 {
				errs = append(errs, field.Invalid(ipsPath.Index(i), ip, fmt.Sprintf("expected an IPv6 value as indicated by `ipFamilies[%v]`", i)))
			}
		}
	}
	return errs
}

func trafficPolicies(svc *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	spec := &svc.Spec
	if !externallyAccessible(svc) {
		if spec.ExternalTrafficPolicy != "" {
			errs = append(errs, field.Invalid(specPath.Child("externalTrafficPolicy"), spec.ExternalTrafficPolicy, "may only be set for externally-accessible services"))
		}
	} else {
		errs = append(errs, enum(spec.ExternalTrafficPolicy, specPath.Child("externalTrafficPolicy"), externalTrafficPolicies...)...)
	}
	hcPath := specPath.Child("healthCheckNodePort")
	if !needsHealthCheck(svc) {
		if spec.HealthCheckNodePort != 0 {
			errs = append(errs, field.Invalid(hcPath, spec.HealthCheckNodePort, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"))
		}
	} else if spec.HealthCheckNodePort == 0 {
		errs = append(errs, field.Required(hcPath, ""))
	} else {
		errs = append(errs, portNum(spec.HealthCheckNodePort, hcPath)...)
	}
	itpPath := specPath.Child("internalTrafficPolicy")
	if spec.InternalTrafficPolicy == nil {
		// Other types are tolerated without one, as upstream did before the
		// field existed.
		if spec.Type == corev1.ServiceTypeClusterIP || spec.Type == corev1.ServiceTypeNodePort || spec.Type == corev1.ServiceTypeLoadBalancer {
			errs = append(errs, field.Required(itpPath, ""))
		}
	} else {
		errs = append(errs, enum(*spec.InternalTrafficPolicy, itpPath, internalTrafficPolicies...)...)
	}
	if spec.TrafficDistribution != nil {
		errs = append(errs, enum(*spec.TrafficDistribution, specPath.Child("trafficDistribution"), trafficDistributions...)...)
	}
	return errs
}

// serviceChange keeps allocated addresses: the primary cluster IP and IP
// family never change (except to or from ExternalName); a secondary may be
// added or released.
func serviceChange(svc, old *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, clusterIPChange(svc, old)...)
	errs = append(errs, ipFamilyChange(svc, old)...)
	if old.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		if !equalStringPtr(old.Spec.LoadBalancerClass, svc.Spec.LoadBalancerClass) {
			errs = append(errs, field.Invalid(specPath.Child("loadBalancerClass"), svc.Spec.LoadBalancerClass, "may not change once set"))
		}
	}
	if needsHealthCheck(old) && needsHealthCheck(svc) && old.Spec.HealthCheckNodePort != svc.Spec.HealthCheckNodePort {
		errs = append(errs, field.Forbidden(specPath.Child("healthCheckNodePort"), "field is immutable"))
	}
	return errs
}

func equalStringPtr(a, b *string) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func clusterIPChange(svc, old *corev1.Service) field.ErrorList {
	if old.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	ipsPath := specPath.Child("clusterIPs")
	if isHeadless(old) {
		if !slices.Equal(old.Spec.ClusterIPs, svc.Spec.ClusterIPs) {
			return field.ErrorList{field.Invalid(ipsPath, svc.Spec.ClusterIPs, "may not change once set")}
		}
		return nil
	}
	var errs field.ErrorList
	if len(old.Spec.ClusterIPs) > 0 && len(svc.Spec.ClusterIPs) == 0 {
		errs = append(errs, field.Invalid(ipsPath, svc.Spec.ClusterIPs, "primary clusterIP can not be unset"))
	}
	for i, ip := range svc.Spec.ClusterIPs {
		if i < len(old.Spec.ClusterIPs) && old.Spec.ClusterIPs[i] != ip {
			errs = append(errs, field.Invalid(ipsPath.Index(i), ip, "may not change once set"))
		}
	}
	if len(svc.Spec.ClusterIPs) > 0 && len(svc.Spec.ClusterIPs) < len(old.Spec.ClusterIPs) &&
		(svc.Spec.IPFamilyPolicy == nil || *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
		errs = append(errs, field.Invalid(specPath.Child("ipFamilyPolicy"), svc.Spec.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary clusterIP"))
	}
	return errs
}

func ipFamilyChange(svc, old *corev1.Service) field.ErrorList {
	if old.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	famPath := specPath.Child("ipFamilies")
	var errs field.ErrorList
	for i, f := range svc.Spec.IPFamilies {
		if i < len(old.Spec.IPFamilies) && old.Spec.IPFamilies[i] != f && (i == 0 || !isHeadless(old)) {
			errs = append(errs, field.Invalid(famPath.Index(i), f, "may not change once set"))
		}
	}
	if len(svc.Spec.IPFamilies) > 0 && len(svc.Spec.IPFamilies) < len(old.Spec.IPFamilies) &&
		(svc.Spec.IPFamilyPolicy == nil || *svc.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack) {
		errs = append(errs, field.Invalid(specPath.Child("ipFamilyPolicy"), svc.Spec.IPFamilyPolicy, "must be set to 'SingleStack' when releasing the secondary ipFamily"))
	}
	return errs
}

var loadBalancerIPModes = []corev1.LoadBalancerIPMode{corev1.LoadBalancerIPModeVIP, corev1.LoadBalancerIPModeProxy}

// loadBalancerStatus checks status.loadBalancer of Services and Ingresses'
// equivalent shape.
func loadBalancerStatus(st *corev1.LoadBalancerStatus, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, in := range st.Ingress {
		p := fldPath.Child("ingress").Index(i)
		if in.IP != "" {
			errs = append(errs, validation.IsValidIPForLegacyField(p.Child("ip"), in.IP, true, nil)...)
		}
		switch {
		case in.IPMode != nil && in.IP == "":
			errs = append(errs, field.Forbidden(p.Child("ipMode"), "may not be specified when `ip` is not set"))
		case in.IPMode == nil && in.IP != "":
			errs = append(errs, field.Required(p.Child("ipMode"), "must be specified when `ip` is set"))
		case in.IPMode != nil:
			errs = append(errs, enum(*in.IPMode, p.Child("ipMode"), loadBalancerIPModes...)...)
		}
		if in.Hostname != "" {
			errs = append(errs, dns1123Subdomain(in.Hostname, p.Child("hostname"))...)
			if _, err := netip.ParseAddr(in.Hostname); err == nil {
				errs = append(errs, field.Invalid(p.Child("hostname"), in.Hostname, "must be a DNS name, not an IP address"))
			}
		}
		for j, port := range in.Ports {
			pp := p.Child("ports").Index(j)
			errs = append(errs, portNum(port.Port, pp.Child("port"))...)
			errs = append(errs, enum(port.Protocol, pp.Child("protocol"), supportedProtocols...)...)
		}
	}
	return errs
}
