package v1alpha1

import (
	"fmt"
	"net/netip"
	"strings"

	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// AddressRange is an inclusive range of addresses of one family.
type AddressRange struct {
	First, Last netip.Addr
}

// Contains reports whether a lies in r.
func (r AddressRange) Contains(a netip.Addr) bool {
	return a.BitLen() == r.First.BitLen() && r.First.Compare(a) <= 0 && a.Compare(r.Last) <= 0
}

// Overlaps reports whether r and o share an address.
func (r AddressRange) Overlaps(o AddressRange) bool {
	return r.First.BitLen() == o.First.BitLen() && r.First.Compare(o.Last) <= 0 && o.First.Compare(r.Last) <= 0
}

// String writes r as the spec does.
func (r AddressRange) String() string {
	return r.First.String() + "-" + r.Last.String()
}

// ParseAddressRange reads one entry of AddressPoolSpec.Addresses: a CIDR or
// "first-last". IPv4-mapped IPv6 addresses are refused: a Service's
// address family must be plain.
func ParseAddressRange(s string) (AddressRange, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return AddressRange{}, fmt.Errorf("not a CIDR: %w", err)
		}
		if p.Addr().Is4In6() {
			return AddressRange{}, fmt.Errorf("IPv4-mapped IPv6 addresses are not allowed")
		}
		if p.Masked() != p {
			return AddressRange{}, fmt.Errorf("host bits are set; the network is %s", p.Masked())
		}
		return AddressRange{First: p.Addr(), Last: lastOf(p)}, nil
	}
	lo, hi, ok := strings.Cut(s, "-")
	if !ok {
		return AddressRange{}, fmt.Errorf(`must be a CIDR or a range "first-last"`)
	}
	first, err := netip.ParseAddr(strings.TrimSpace(lo))
	if err != nil {
		return AddressRange{}, fmt.Errorf("range start: %w", err)
	}
	last, err := netip.ParseAddr(strings.TrimSpace(hi))
	if err != nil {
		return AddressRange{}, fmt.Errorf("range end: %w", err)
	}
	switch {
	case first.Zone() != "" || last.Zone() != "":
		return AddressRange{}, fmt.Errorf("zoned addresses are not allowed")
	case first.Is4In6() || last.Is4In6():
		return AddressRange{}, fmt.Errorf("IPv4-mapped IPv6 addresses are not allowed")
	case first.BitLen() != last.BitLen():
		return AddressRange{}, fmt.Errorf("start and end are of different IP families")
	case last.Less(first):
		return AddressRange{}, fmt.Errorf("end is before start")
	}
	return AddressRange{First: first, Last: last}, nil
}

// lastOf is the highest address of p.
func lastOf(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// ParseAddresses parses every entry of spec.Addresses; entries that do not
// parse are left out (ValidateAddressPoolSpec reports them).
func ParseAddresses(spec *AddressPoolSpec) []AddressRange {
	var out []AddressRange
	for _, s := range spec.Addresses {
		if r, err := ParseAddressRange(s); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// ValidateAddressPoolSpec checks a pool's spec; p is the path of the spec
// (spec, or loadBalancer.pools[i]).
func ValidateAddressPoolSpec(spec *AddressPoolSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	ap := p.Child("addresses")
	if len(spec.Addresses) == 0 {
		errs = append(errs, field.Required(ap, "at least one CIDR or range"))
	}
	var seen []AddressRange
	for i, s := range spec.Addresses {
		r, err := ParseAddressRange(s)
		if err != nil {
			errs = append(errs, field.Invalid(ap.Index(i), s, err.Error()))
			continue
		}
		for j, o := range seen {
			if r.Overlaps(o) {
				errs = append(errs, field.Invalid(ap.Index(i), s, fmt.Sprintf("overlaps %s (entry %d)", spec.Addresses[j], j)))
				break
			}
		}
		seen = append(seen, r)
	}
	for i, ns := range spec.Namespaces {
		for _, msg := range validation.IsDNS1123Label(ns) {
			errs = append(errs, field.Invalid(p.Child("namespaces").Index(i), ns, msg))
		}
	}
	opts := metav1validation.LabelSelectorValidationOptions{}
	if spec.NamespaceSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(spec.NamespaceSelector, opts, p.Child("namespaceSelector"))...)
	}
	if spec.ServiceSelector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(spec.ServiceSelector, opts, p.Child("serviceSelector"))...)
	}
	return errs
}

// AutoAssigns reports whether the pool serves Services that did not ask
// for it.
func (s *AddressPoolSpec) AutoAssigns() bool {
	return s.AutoAssign == nil || *s.AutoAssign
}
