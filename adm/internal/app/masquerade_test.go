package app

import (
	"testing"

	"trireme.dev/adm/internal/options"
	"trireme.dev/api/config/v1alpha1"
)

func TestFlannelMasquerades(t *testing.T) {
	off := map[string]any{"flannel": map[string]any{"enabled": false}}
	tests := []struct {
		name   string
		values map[string]any
		skip   []string
		init   bool
		want   bool
	}{
		{name: "init with the addons", init: true, want: true},
		{name: "init without the addon phase", init: true, skip: []string{"addon"}, want: false},
		{name: "init with flannel off", init: true, values: off, want: false},
		{name: "other phases skipped", init: true, skip: []string{"preflight"}, want: true},
		{name: "a join, which has no init configuration", want: true},
		{name: "a join to a cluster without flannel", values: off, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &options.Config{Cluster: &v1alpha1.ClusterConfiguration{Addons: v1alpha1.Addons{Values: tt.values}}}
			if tt.init {
				cfg.Init = &v1alpha1.InitConfiguration{SkipPhases: tt.skip}
			}
			if got := flannelMasquerades(cfg); got != tt.want {
				t.Fatalf("flannelMasquerades = %v, want %v", got, tt.want)
			}
		})
	}
}
