package cloudconfig

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	lbv1alpha1 "trireme.dev/api/loadbalancer/v1alpha1"
)

// addressTypes are the NodeAddress types a machine may list.
var addressTypes = []string{string(corev1.NodeHostName), string(corev1.NodeInternalIP), string(corev1.NodeExternalIP), string(corev1.NodeInternalDNS), string(corev1.NodeExternalDNS)}

// Validate checks a defaulted CloudConfiguration.
func Validate(c *CloudConfiguration) field.ErrorList {
	var errs field.ErrorList
	if c.APIVersion != APIVersion {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), c.APIVersion, []string{APIVersion}))
	}
	if c.Kind != Kind {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), c.Kind, []string{Kind}))
	}
	names := map[string]int{}
	ids := map[string]int{}
	for i := range c.Machines {
		m := &c.Machines[i]
		p := field.NewPath("machines").Index(i)
		for _, msg := range validation.IsDNS1123Subdomain(m.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), m.Name, msg))
		}
		if j, dup := names[m.Name]; dup {
			errs = append(errs, field.Duplicate(p.Child("name"), fmt.Sprintf("%s (also machines[%d])", m.Name, j)))
		}
		names[m.Name] = i
		if j, dup := ids[m.ProviderID]; dup {
			errs = append(errs, field.Duplicate(p.Child("providerID"), fmt.Sprintf("%s (also machines[%d])", m.ProviderID, j)))
		}
		ids[m.ProviderID] = i
		for k, a := range m.Addresses {
			ap := p.Child("addresses").Index(k)
			switch a.Type {
			case corev1.NodeInternalIP, corev1.NodeExternalIP:
				if _, err := netip.ParseAddr(a.Address); err != nil {
					errs = append(errs, field.Invalid(ap.Child("address"), a.Address, "must be an IP address"))
				}
			case corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeExternalDNS:
				for _, msg := range validation.IsDNS1123Subdomain(a.Address) {
					errs = append(errs, field.Invalid(ap.Child("address"), a.Address, msg))
				}
			default:
				errs = append(errs, field.NotSupported(ap.Child("type"), a.Type, addressTypes))
			}
		}
		for _, l := range []struct{ name, v string }{{"zone", m.Zone}, {"region", m.Region}, {"instanceType", m.InstanceType}} {
			if l.v == "" {
				continue
			}
			for _, msg := range validation.IsValidLabelValue(l.v) {
				errs = append(errs, field.Invalid(p.Child(l.name), l.v, msg))
			}
		}
	}
	errs = append(errs, ValidatePools(c.LoadBalancer.Pools, field.NewPath("loadBalancer", "pools"))...)
	return errs
}

// ValidatePools checks each pool and that no two pools overlap.
func ValidatePools(pools []Pool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := map[string]int{}
	type owned struct {
		r    lbv1alpha1.AddressRange
		pool int
	}
	var taken []owned
	for i := range pools {
		pp := p.Index(i)
		pool := &pools[i]
		for _, msg := range validation.IsDNS1123Subdomain(pool.Name) {
			errs = append(errs, field.Invalid(pp.Child("name"), pool.Name, msg))
		}
		if j, dup := names[pool.Name]; dup {
			errs = append(errs, field.Duplicate(pp.Child("name"), fmt.Sprintf("%s (also pools[%d])", pool.Name, j)))
		}
		names[pool.Name] = i
		pe := lbv1alpha1.ValidateAddressPoolSpec(&pool.AddressPoolSpec, pp)
		errs = append(errs, pe...)
		if len(pe) > 0 {
			continue
		}
		ranges := lbv1alpha1.ParseAddresses(&pool.AddressPoolSpec)
		for k, r := range ranges {
			for _, o := range taken {
				if r.Overlaps(o.r) {
					errs = append(errs, field.Invalid(pp.Child("addresses").Index(k), pool.Addresses[k], fmt.Sprintf("overlaps pool %q", pools[o.pool].Name)))
				}
			}
		}
		for _, r := range ranges {
			taken = append(taken, owned{r, i})
		}
	}
	return errs
}
