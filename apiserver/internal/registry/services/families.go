package services

import (
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"trireme.dev/api/validation"
)

var (
	policyPath   = field.NewPath("spec", "ipFamilyPolicy")
	familiesPath = field.NewPath("spec", "ipFamilies")
	ipsPath      = field.NewPath("spec", "clusterIPs")
)

// familyOf is the IP family of a textual address, or "" when it is not one.
func familyOf(ip string) corev1.IPFamily {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return ""
	}
	if addr.Is4() || addr.Is4In6() {
		return corev1.IPv4Protocol
	}
	return corev1.IPv6Protocol
}

// otherFamily is the family a dual-stack Service adds to f.
func otherFamily(f corev1.IPFamily) corev1.IPFamily {
	if f == corev1.IPv4Protocol {
		return corev1.IPv6Protocol
	}
	return corev1.IPv4Protocol
}

func policyOf(svc *corev1.Service) corev1.IPFamilyPolicy {
	if svc.Spec.IPFamilyPolicy == nil {
		return ""
	}
	return *svc.Spec.IPFamilyPolicy
}

func isHeadless(svc *corev1.Service) bool {
	return svc.Spec.ClusterIP == corev1.ClusterIPNone
}

// normalizeClusterIPs keeps clusterIPs[0] and clusterIP in step when the
// client set only the older clusterIP field, as upstream does.
func normalizeClusterIPs(svc, old *corev1.Service) {
	spec := &svc.Spec
	if old != nil && spec.ClusterIP != old.Spec.ClusterIP && slices.Equal(spec.ClusterIPs, old.Spec.ClusterIPs) {
		// The client changed clusterIP but sent the old clusterIPs back.
		spec.ClusterIPs = nil
	}
	if len(spec.ClusterIPs) == 0 && spec.ClusterIP != "" {
		spec.ClusterIPs = []string{spec.ClusterIP}
	}
}

// unchangedPreferDualStack reports an update of a PreferDualStack Service
// that leaves its type, addresses and families as they were: such a Service
// keeps the addresses it has, even when the cluster has since gained or
// lost a family.
func unchangedPreferDualStack(svc, old *corev1.Service) bool {
	if old == nil || svc.Spec.Type != old.Spec.Type || !needsClusterIP(svc) {
		return false
	}
	if policyOf(svc) != corev1.IPFamilyPolicyPreferDualStack || policyOf(old) != corev1.IPFamilyPolicyPreferDualStack {
		return false
	}
	return slices.Equal(svc.Spec.ClusterIPs, old.Spec.ClusterIPs) && slices.Equal(svc.Spec.IPFamilies, old.Spec.IPFamilies)
}

// initFamilies defaults ipFamilyPolicy and ipFamilies from the cluster's
// service ranges and checks the Service asks only for families the cluster
// serves, as upstream does before it allocates (on create, old is nil). On
// update it also applies a downgrade to SingleStack by dropping the
// secondary address and family.
func (a *Allocators) initFamilies(svc, old *corev1.Service) error {
	spec := &svc.Spec
	if spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	normalizeClusterIPs(svc, old)
	if unchangedPreferDualStack(svc, old) {
		return nil
	}
	if spec.IPFamilyPolicy == nil {
		var p corev1.IPFamilyPolicy
		switch {
		case old != nil && old.Spec.IPFamilyPolicy != nil:
			p = *old.Spec.IPFamilyPolicy
		case isHeadless(svc) && len(spec.Selector) == 0:
			// Selectorless headless Services have endpoints of any family.
			p = corev1.IPFamilyPolicyRequireDualStack
		default:
			p = corev1.IPFamilyPolicySingleStack
		}
		spec.IPFamilyPolicy = &p
	}
	policy := *spec.IPFamilyPolicy

	var errs field.ErrorList
	if old != nil {
		if policy == corev1.IPFamilyPolicySingleStack {
			// Asking for SingleStack while sending back what the Service
			// holds is a downgrade; the primary address and family stay.
			if len(spec.ClusterIPs) > 1 && slices.Equal(spec.ClusterIPs, old.Spec.ClusterIPs) {
				spec.ClusterIPs = spec.ClusterIPs[:1]
			}
			if len(spec.IPFamilies) > 1 && slices.Equal(spec.IPFamilies, old.Spec.IPFamilies) {
				spec.IPFamilies = spec.IPFamilies[:1]
			}
		} else {
			if len(spec.ClusterIPs) > 0 && len(spec.ClusterIPs) < len(old.Spec.ClusterIPs) {
				errs = append(errs, field.Invalid(policyPath, policy, "must be 'SingleStack' to release the secondary cluster IP"))
			}
			if len(spec.IPFamilies) > 0 && len(spec.IPFamilies) < len(old.Spec.IPFamilies) {
				errs = append(errs, field.Invalid(policyPath, policy, "must be 'SingleStack' to release the secondary IP family"))
			}
		}
	}
	if fieldErrs := validation.ServiceClusterIPFields(svc); len(fieldErrs) > 0 {
		return invalid(svc, append(errs, fieldErrs...)...)
	}

	// Families of requested addresses the client did not name are inferred.
	for i, ip := range spec.ClusterIPs {
		if ip == corev1.ClusterIPNone {
			break
		}
		if i < len(spec.IPFamilies) {
			continue
		}
		fam := familyOf(ip)
		if a.allocator(fam) == nil {
			errs = append(errs, field.Invalid(ipsPath.Index(i), spec.ClusterIPs, fmt.Sprintf("%s is not configured on this cluster", fam)))
			continue
		}
		spec.IPFamilies = append(spec.IPFamilies, fam)
	}
	if len(errs) > 0 {
		return invalid(svc, errs...)
	}

	if isHeadless(svc) && len(spec.Selector) == 0 {
		// Selectorless headless Services may name families the cluster
		// does not serve: they get no address from it.
		if len(spec.IPFamilies) == 0 {
			spec.IPFamilies = []corev1.IPFamily{a.primaryFamily()}
		}
		if len(spec.IPFamilies) == 1 && policy != corev1.IPFamilyPolicySingleStack {
			spec.IPFamilies = append(spec.IPFamilies, otherFamily(spec.IPFamilies[0]))
		}
		return nil
	}

	if policy == corev1.IPFamilyPolicyRequireDualStack && !a.dualStack() {
		errs = append(errs, field.Invalid(policyPath, policy, "this cluster is not configured for dual-stack services"))
	}
	for i, f := range spec.IPFamilies {
		if a.allocator(f) == nil {
			errs = append(errs, field.Invalid(familiesPath.Index(i), f, "not configured on this cluster"))
		}
	}
	if len(errs) > 0 {
		return invalid(svc, errs...)
	}
	if len(spec.IPFamilies) == 0 {
		spec.IPFamilies = []corev1.IPFamily{a.primaryFamily()}
	}
	if policy != corev1.IPFamilyPolicySingleStack && len(spec.IPFamilies) == 1 && a.dualStack() {
		spec.IPFamilies = append(spec.IPFamilies, otherFamily(spec.IPFamilies[0]))
	}
	return nil
}
