package bootstrap

import (
	"context"
	"net/netip"
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

func TestEnsureServiceCIDR(t *testing.T) {
	existing := func(cidrs ...string) []runtime.Object {
		return []runtime.Object{&networkingv1.ServiceCIDR{
			ObjectMeta: metav1.ObjectMeta{Name: defaultServiceCIDR},
			Spec:       networkingv1.ServiceCIDRSpec{CIDRs: cidrs},
		}}
	}
	tests := []struct {
		name     string
		objs     []runtime.Object
		flag     []string
		wantCIDR []string
	}{
		{"created single-stack", nil, []string{"10.96.0.0/12"}, []string{"10.96.0.0/12"}},
		{"created dual-stack", nil, []string{"10.96.0.0/12", "fd00:96::/112"}, []string{"10.96.0.0/12", "fd00:96::/112"}},
		{"created IPv6 primary", nil, []string{"fd00:96::/112", "10.96.0.0/12"}, []string{"fd00:96::/112", "10.96.0.0/12"}},
		{"single-stack gains its secondary", existing("10.96.0.0/12"), []string{"10.96.0.0/12", "fd00:96::/112"}, []string{"10.96.0.0/12", "fd00:96::/112"}},
		{"other primary is left alone", existing("10.97.0.0/16"), []string{"10.96.0.0/12", "fd00:96::/112"}, []string{"10.97.0.0/16"}},
		{"dual-stack is not downgraded", existing("10.96.0.0/12", "fd00:96::/112"), []string{"10.96.0.0/12"}, []string{"10.96.0.0/12", "fd00:96::/112"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(tt.objs...)
			b := &Bootstrap{Client: client}
			for _, c := range tt.flag {
				b.ServiceCIDRs = append(b.ServiceCIDRs, netip.MustParsePrefix(c))
			}
			if err := b.ensureServiceCIDR(context.Background()); err != nil {
				t.Fatal(err)
			}
			sc, err := client.NetworkingV1().ServiceCIDRs().Get(context.Background(), defaultServiceCIDR, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sc.Spec.CIDRs, tt.wantCIDR) {
				t.Errorf("cidrs = %v, want %v", sc.Spec.CIDRs, tt.wantCIDR)
			}
			ready := false
			for _, c := range sc.Status.Conditions {
				ready = ready || c.Type == networkingv1.ServiceCIDRConditionReady && c.Status == metav1.ConditionTrue
			}
			if !ready {
				t.Errorf("ServiceCIDR not Ready: %+v", sc.Status)
			}
		})
	}
}
