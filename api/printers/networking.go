package printers

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	discoveryv1beta1 "k8s.io/api/discovery/v1beta1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	networkingv1 "k8s.io/api/networking/v1"
	networkingv1beta1 "k8s.io/api/networking/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var ingressColumns = columns(
	nameCol(),
	col("Class", typeString, "The name of the IngressClass resource that should be used for additional configuration"),
	col("Hosts", typeString, "Hosts that incoming requests are matched against before the ingress rule"),
	col("Address", typeString, "Address is a list containing ingress points for the load-balancer"),
	col("Ports", typeString, "Ports of TLS configurations that open"),
	ageCol(),
)

func ingressCells(in *networkingv1.Ingress, now time.Time) []any {
	var lb []corev1.LoadBalancerIngress
	for _, i := range in.Status.LoadBalancer.Ingress {
		lb = append(lb, corev1.LoadBalancerIngress{IP: i.IP, Hostname: i.Hostname})
	}
	ports := "80"
	if len(in.Spec.TLS) > 0 {
		ports = "80, 443"
	}
	// Always wide, so the address list is not clipped.
	return []any{in.Name, stringOr(in.Spec.IngressClassName, none), ingressHosts(in.Spec.Rules),
		strings.Join(loadBalancerAddresses(lb), ","), ports, age(in, now)}
}

// ingressHosts lists the first three rule hosts; the count of the rest is
// of rules, host or not, as upstream counts it.
func ingressHosts(rules []networkingv1.IngressRule) string {
	const limit = 3
	var list []string
	more := false
	for _, r := range rules {
		if len(list) == limit {
			more = true
			break
		}
		if r.Host != "" {
			list = append(list, r.Host)
		}
	}
	if len(list) == 0 {
		return "*"
	}
	if more {
		return fmt.Sprintf("%s + %d more...", strings.Join(list, ","), len(rules)-limit)
	}
	return strings.Join(list, ",")
}

var ingressClassColumns = columns(
	nameCol(),
	col("Controller", typeString, "Controller that is responsible for handling this class"),
	col("Parameters", typeString, "A reference to a resource with additional parameters"),
	ageCol(),
)

// defaultIngressClassAnnotation marks the class Ingresses without a class get.
const defaultIngressClassAnnotation = "ingressclass.kubernetes.io/is-default-class"

func ingressClassCells(c *networkingv1.IngressClass, now time.Time) []any {
	name := c.Name
	if c.Annotations[defaultIngressClassAnnotation] == "true" {
		name += " (default)"
	}
	parameters := none
	if p := c.Spec.Parameters; p != nil {
		parameters = p.Kind
		if p.APIGroup != nil {
			parameters += "." + *p.APIGroup
		}
		parameters += "/" + p.Name
	}
	return []any{name, c.Spec.Controller, parameters, age(c, now)}
}

var networkPolicyColumns = columns(
	nameCol(),
	col("Pod-Selector", typeString, extensionsv1beta1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]),
	ageCol(),
)

func networkPolicyCells(np *networkingv1.NetworkPolicy, now time.Time) []any {
	return []any{np.Name, metav1.FormatLabelSelector(&np.Spec.PodSelector), age(np, now)}
}

var serviceCIDRColumns = columns(
	nameCol(),
	col("CIDRs", typeString, networkingv1beta1.ServiceCIDRSpec{}.SwaggerDoc()["cidrs"]),
	ageCol(),
)

func serviceCIDRCells(c *networkingv1.ServiceCIDR, now time.Time) []any {
	return []any{c.Name, strings.Join(c.Spec.CIDRs, ","), age(c, now)}
}

// ipAddressColumns has no Age column although each row carries an age cell:
// upstream's printer does the same, and clients print only the columns.
var ipAddressColumns = columns(
	nameCol(),
	col("ParentRef", typeString, networkingv1beta1.IPAddressSpec{}.SwaggerDoc()["parentRef"]),
)

func ipAddressCells(ip *networkingv1.IPAddress, now time.Time) []any {
	parent := none
	if ref := ip.Spec.ParentRef; ref != nil {
		parent = strings.ToLower(schema.GroupResource{Group: ref.Group, Resource: ref.Resource}.String())
		if ref.Namespace != "" {
			parent += "/" + ref.Namespace
		}
		parent += "/" + ref.Name
	}
	return []any{ip.Name, parent, age(ip, now)}
}

var endpointSliceColumns = columns(
	nameCol(),
	col("AddressType", typeString, discoveryv1beta1.EndpointSlice{}.SwaggerDoc()["addressType"]),
	col("Ports", typeString, discoveryv1beta1.EndpointSlice{}.SwaggerDoc()["ports"]),
	col("Endpoints", typeString, discoveryv1beta1.EndpointSlice{}.SwaggerDoc()["endpoints"]),
	ageCol(),
)

func endpointSliceCells(s *discoveryv1.EndpointSlice, now time.Time) []any {
	const limit = 3
	var ports []string
	for _, p := range s.Ports {
		if len(ports) == limit {
			break
		}
		switch {
		case p.Port != nil:
			ports = append(ports, strconv.Itoa(int(*p.Port)))
		case p.Name != nil:
			ports = append(ports, *p.Name)
		default:
			ports = append(ports, "*")
		}
	}
	var addresses []string
	total := 0
	for _, ep := range s.Endpoints {
		for _, a := range ep.Addresses {
			if len(addresses) < limit {
				addresses = append(addresses, a)
			}
			total++
		}
	}
	return []any{s.Name, string(s.AddressType), firstWithMore(ports, len(s.Ports), limit),
		firstWithMore(addresses, total, limit), age(s, now)}
}
