package proxier

import (
	"net/netip"
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"trireme.dev/proxy/internal/model"
)

func TestServiceCIDRs(t *testing.T) {
	pfx := func(ss ...string) []netip.Prefix {
		var out []netip.Prefix
		for _, s := range ss {
			out = append(out, netip.MustParsePrefix(s))
		}
		return out
	}
	cidr := func(name string, cidrs ...string) *networkingv1.ServiceCIDR {
		return &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
	}
	for _, tt := range []struct {
		name       string
		configured []netip.Prefix
		objects    []*networkingv1.ServiceCIDR
		want4      []netip.Prefix
		want6      []netip.Prefix
	}{
		{name: "none"},
		{name: "configured only", configured: pfx("10.96.0.0/16", "fd00:96::/108"), want4: pfx("10.96.0.0/16"), want6: pfx("fd00:96::/108")},
		{name: "objects win over the configuration", configured: pfx("10.0.0.0/24"),
			objects: []*networkingv1.ServiceCIDR{cidr("kubernetes", "10.96.0.0/16", "fd00:96::/108"), cidr("extra", "10.100.0.0/24", "10.96.0.0/16")},
			want4:   pfx("10.96.0.0/16", "10.100.0.0/24"), want6: pfx("fd00:96::/108")},
		{name: "unparsable entries are ignored, host bits masked", objects: []*networkingv1.ServiceCIDR{cidr("x", "nonsense", "10.96.0.1/16")},
			want4: pfx("10.96.0.0/16")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &Proxier{cfg: Config{ServiceCIDRs: tt.configured}, cidrIndexer: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})}
			for _, o := range tt.objects {
				if err := p.cidrIndexer.Add(o); err != nil {
					t.Fatal(err)
				}
			}
			all := p.serviceCIDRs()
			if got := ofFamily(all, model.IPv4); !slices.Equal(got, tt.want4) {
				t.Errorf("IPv4: got %v, want %v", got, tt.want4)
			}
			if got := ofFamily(all, model.IPv6); !slices.Equal(got, tt.want6) {
				t.Errorf("IPv6: got %v, want %v", got, tt.want6)
			}
		})
	}
}
