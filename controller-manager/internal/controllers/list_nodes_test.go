package controllers

import (
	"context"
	"testing"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/options"
)

func TestNodeControllersDefaults(t *testing.T) {
	byName := map[string]Descriptor{}
	for _, d := range All {
		byName[d.Name] = d
	}
	tests := []struct {
		name string
		want bool
	}{
		{"nodelifecycle", true},
		{"taint-eviction-controller", true},
		{"nodeipam", true},
		{"csrapproving", true},
		{"csrsigning", true},
		{"persistentvolume-binder", true},
		{"pvc-protection", true},
		{"pv-protection", true},
		{"ephemeral-volume", true},
		{"horizontalpodautoscaling", true},
		{"bootstrapsigner", false},
		{"tokencleaner", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := byName[tt.name]
			if !ok {
				t.Fatalf("controller %s not registered", tt.name)
			}
			if got := Enabled(d, []string{"*"}); got != tt.want {
				t.Errorf("enabled under '*' = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestConfigurationTurnsOff checks the controllers that need flags to do
// anything are not started without them, as upstream.
func TestConfigurationTurnsOff(t *testing.T) {
	client := fake.NewClientset()
	cc := &Context{Config: options.DefaultConfig(), Informers: informers.NewSharedInformerFactory(client, 0)}
	for name, build := range map[string]func(context.Context, *Context, *fake.Clientset) (Runner, error){
		"nodeipam without --allocate-node-cidrs": func(ctx context.Context, cc *Context, c *fake.Clientset) (Runner, error) {
			r, _, err := buildNodeIPAM(ctx, cc, c, record.NewFakeRecorder(1))
			return r, err
		},
		"csrsigning without signing files": func(ctx context.Context, cc *Context, c *fake.Clientset) (Runner, error) {
			r, _, err := buildCSRSigning(ctx, cc, c, record.NewFakeRecorder(1))
			return r, err
		},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := build(context.Background(), cc, client)
			if err != nil || r != nil {
				t.Errorf("build = %v, %v; want nil, nil", r, err)
			}
		})
	}
}
