package admissionchain

import (
	"slices"
	"testing"
)

func TestOrder(t *testing.T) {
	o := NewOptions()
	if errs := o.Validate(); len(errs) > 0 {
		t.Fatalf("default options invalid: %v", errs)
	}
	registered := o.Plugins.Registered()
	t.Run("every registered plugin is in upstream's order", func(t *testing.T) {
		for _, name := range registered {
			if !slices.Contains(upstreamOrder, name) {
				t.Errorf("%s is registered but not in upstreamOrder", name)
			}
		}
	})
	t.Run("chain keeps upstream's relative order", func(t *testing.T) {
		last := -1
		for _, name := range o.RecommendedPluginOrder {
			i := slices.Index(upstreamOrder, name)
			if i <= last {
				t.Errorf("%s out of order", name)
			}
			last = i
		}
	})
	tests := []struct {
		name            string
		enable, disable []string
		wantOn, wantOff []string
	}{
		{"defaults", nil, nil,
			[]string{"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "PodSecurity", "ValidatingAdmissionWebhook", "ResourceQuota", "CertificateSubjectRestriction"},
			[]string{"NodeRestriction", "AlwaysPullImages", "AlwaysDeny", "AlwaysAdmit", "DenyServiceExternalIPs"}},
		{"enable off-by-default plugin", []string{"AlwaysPullImages"}, nil, []string{"AlwaysPullImages"}, nil},
		{"disable default plugin", nil, []string{"ServiceAccount"}, []string{"LimitRanger"}, []string{"ServiceAccount"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			o.EnablePlugins, o.DisablePlugins = tt.enable, tt.disable
			on := o.EnabledPlugins()
			for _, name := range tt.wantOn {
				if !slices.Contains(on, name) {
					t.Errorf("%s not enabled; chain %v", name, on)
				}
			}
			for _, name := range tt.wantOff {
				if slices.Contains(on, name) {
					t.Errorf("%s enabled; chain %v", name, on)
				}
			}
		})
	}
	t.Run("mutating chain starts as upstream's", func(t *testing.T) {
		on := NewOptions().EnabledPlugins()
		want := []string{"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "TaintNodesByCondition", "PodSecurity", "Priority"}
		if !slices.Equal(on[:len(want)], want) {
			t.Errorf("chain starts %v, want %v", on[:len(want)], want)
		}
		if on[len(on)-1] != "ResourceQuota" {
			t.Errorf("chain ends with %s, want ResourceQuota", on[len(on)-1])
		}
	})
}
