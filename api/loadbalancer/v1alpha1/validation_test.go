package v1alpha1

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestParseAddressRange(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "192.168.50.0/28", want: "192.168.50.0-192.168.50.15"},
		{in: "192.168.50.7/32", want: "192.168.50.7-192.168.50.7"},
		{in: "fd00::/120", want: "fd00::-fd00::ff"},
		{in: "10.0.0.10-10.0.0.20", want: "10.0.0.10-10.0.0.20"},
		{in: "10.0.0.10 - 10.0.0.10", want: "10.0.0.10-10.0.0.10"},
		{in: "192.168.50.1/28", err: "host bits"},
		{in: "10.0.0.20-10.0.0.10", err: "before start"},
		{in: "10.0.0.1-fd00::1", err: "different IP families"},
		{in: "::ffff:10.0.0.1/128", err: "IPv4-mapped"},
		{in: "10.0.0.1", err: "CIDR or a range"},
		{in: "10.0.0.300/24", err: "not a CIDR"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			r, err := ParseAddressRange(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.String() != tc.want {
				t.Fatalf("got %s, want %s", r, tc.want)
			}
		})
	}
}

func TestValidateAddressPoolSpec(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spec  AddressPoolSpec
		field string // the first error's field; "" for none
	}{
		{name: "valid", spec: AddressPoolSpec{Addresses: []string{"10.0.0.0/28", "fd00::/124"}, Namespaces: []string{"web"}}},
		{name: "no addresses", spec: AddressPoolSpec{}, field: "spec.addresses"},
		{name: "bad entry", spec: AddressPoolSpec{Addresses: []string{"10.0.0.0/28", "x"}}, field: "spec.addresses[1]"},
		{name: "overlap", spec: AddressPoolSpec{Addresses: []string{"10.0.0.0/28", "10.0.0.5-10.0.0.30"}}, field: "spec.addresses[1]"},
		{name: "bad namespace", spec: AddressPoolSpec{Addresses: []string{"10.0.0.0/28"}, Namespaces: []string{"Web"}}, field: "spec.namespaces[0]"},
		{name: "bad selector", spec: AddressPoolSpec{Addresses: []string{"10.0.0.0/28"}, ServiceSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Sometimes"}},
		}}, field: "spec.serviceSelector.matchExpressions[0].operator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateAddressPoolSpec(&tc.spec, field.NewPath("spec"))
			switch {
			case tc.field == "" && len(errs) > 0:
				t.Fatalf("unexpected errors: %v", errs)
			case tc.field != "" && len(errs) == 0:
				t.Fatalf("no error, want one for %s", tc.field)
			case tc.field != "" && errs[0].Field != tc.field:
				t.Fatalf("first error %v, want field %s", errs[0], tc.field)
			}
		})
	}
}

func TestDeepCopyShares(t *testing.T) {
	yes := true
	p := &AddressPool{Spec: AddressPoolSpec{
		Addresses: []string{"10.0.0.0/28"}, AutoAssign: &yes, Namespaces: []string{"a"},
		ServiceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
	}, Status: AddressPoolStatus{Conditions: []metav1.Condition{{Type: "Valid"}}}}
	c := p.DeepCopy()
	c.Spec.Addresses[0] = "x"
	*c.Spec.AutoAssign = false
	c.Spec.Namespaces[0] = "x"
	c.Spec.ServiceSelector.MatchLabels["a"] = "x"
	c.Status.Conditions[0].Type = "x"
	if p.Spec.Addresses[0] != "10.0.0.0/28" || !*p.Spec.AutoAssign || p.Spec.Namespaces[0] != "a" ||
		p.Spec.ServiceSelector.MatchLabels["a"] != "b" || p.Status.Conditions[0].Type != "Valid" {
		t.Fatalf("the copy shares memory with the original: %+v", p)
	}
}
