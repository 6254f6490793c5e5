package cloudconfig

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	lbv1alpha1 "trireme.dev/api/loadbalancer/v1alpha1"
)

func TestSetDefaults(t *testing.T) {
	c := &CloudConfiguration{Machines: []Machine{{Name: "a"}, {Name: "b", ProviderID: "metal://b"}}}
	SetDefaults(c)
	if c.APIVersion != APIVersion || c.Kind != Kind {
		t.Errorf("type meta %s %s", c.APIVersion, c.Kind)
	}
	if c.Machines[0].ProviderID != "trireme://a" || c.Machines[1].ProviderID != "metal://b" {
		t.Errorf("provider IDs %q %q", c.Machines[0].ProviderID, c.Machines[1].ProviderID)
	}
}

func TestValidate(t *testing.T) {
	pool := func(name string, addrs ...string) Pool {
		return Pool{Name: name, AddressPoolSpec: lbv1alpha1.AddressPoolSpec{Addresses: addrs}}
	}
	for _, tc := range []struct {
		name  string
		cfg   CloudConfiguration
		field string // the first error's field; "" for none
	}{
		{name: "empty"},
		{name: "full", cfg: CloudConfiguration{
			Machines: []Machine{{Name: "n1", Zone: "z1", Region: "r1", InstanceType: "vm.small",
				Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeHostName, Address: "n1"}}}},
			LoadBalancer: LoadBalancer{Pools: []Pool{pool("a", "10.1.0.0/28"), pool("b", "10.1.0.16/28", "fd00::/120")}},
		}},
		{name: "bad machine name", cfg: CloudConfiguration{Machines: []Machine{{Name: "N_1"}}}, field: "machines[0].name"},
		{name: "duplicate machine", cfg: CloudConfiguration{Machines: []Machine{{Name: "a"}, {Name: "a"}}}, field: "machines[1].name"},
		{name: "bad address", cfg: CloudConfiguration{Machines: []Machine{{Name: "a",
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0"}}}}}, field: "machines[0].addresses[0].address"},
		{name: "bad address type", cfg: CloudConfiguration{Machines: []Machine{{Name: "a",
			Addresses: []corev1.NodeAddress{{Type: "Public", Address: "10.0.0.1"}}}}}, field: "machines[0].addresses[0].type"},
		{name: "bad zone", cfg: CloudConfiguration{Machines: []Machine{{Name: "a", Zone: "z 1"}}}, field: "machines[0].zone"},
		{name: "pool without addresses", cfg: CloudConfiguration{LoadBalancer: LoadBalancer{Pools: []Pool{pool("a")}}}, field: "loadBalancer.pools[0].addresses"},
		{name: "pools overlap", cfg: CloudConfiguration{LoadBalancer: LoadBalancer{Pools: []Pool{pool("a", "10.1.0.0/28"), pool("b", "10.1.0.8-10.1.0.40")}}},
			field: "loadBalancer.pools[1].addresses[0]"},
		{name: "duplicate pool", cfg: CloudConfiguration{LoadBalancer: LoadBalancer{Pools: []Pool{pool("a", "10.1.0.0/28"), pool("a", "10.2.0.0/28")}}},
			field: "loadBalancer.pools[1].name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			SetDefaults(&tc.cfg)
			errs := Validate(&tc.cfg)
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
