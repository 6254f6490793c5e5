package controllers

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	kcmconfig "k8s.io/kube-controller-manager/config/v1alpha1"
)

func TestEnabled(t *testing.T) {
	d := Descriptor{Name: "foo", Aliases: []string{"foo-controller"}}
	off := Descriptor{Name: "bar", OffByDefault: true}
	tests := []struct {
		name string
		d    Descriptor
		list []string
		want bool
	}{
		{"star enables on-by-default", d, []string{"*"}, true},
		{"star leaves off-by-default off", off, []string{"*"}, false},
		{"named enables off-by-default", off, []string{"*", "bar"}, true},
		{"minus disables", d, []string{"*", "-foo"}, false},
		{"minus alias disables", d, []string{"*", "-foo-controller"}, false},
		{"alias enables", d, []string{"foo-controller"}, true},
		{"first entry wins", d, []string{"foo", "-foo"}, true},
		{"first entry wins when disabling", d, []string{"-foo", "foo", "*"}, false},
		{"unnamed without star is off", d, []string{"other"}, false},
		{"empty list is off", d, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Enabled(tt.d, tt.list); got != tt.want {
				t.Errorf("Enabled(%s, %v) = %v, want %v", tt.d.Name, tt.list, got, tt.want)
			}
		})
	}
}

func TestAllNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range Names(All) {
		if seen[n] {
			t.Errorf("name %q used twice", n)
		}
		seen[n] = true
	}
	for _, d := range All {
		if d.ClientName == "" || d.Build == nil {
			t.Errorf("controller %s lacks a client name or build function", d.Name)
		}
	}
}

func TestServed(t *testing.T) {
	client := fake.NewClientset()
	dc := client.Discovery().(*fakediscovery.FakeDiscovery)
	dc.Resources = []*metav1.APIResourceList{{GroupVersion: "v1"}, {GroupVersion: "apps/v1"}}
	tests := []struct {
		gv   schema.GroupVersion
		want bool
	}{
		{schema.GroupVersion{Group: "apps", Version: "v1"}, true},
		{schema.GroupVersion{Version: "v1"}, true},
		{schema.GroupVersion{Group: "rbac.authorization.k8s.io", Version: "v1"}, false},
		{schema.GroupVersion{Group: "apps", Version: "v2"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.gv.String(), func(t *testing.T) {
			got, err := Served(dc, tt.gv)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Served(%s) = %v, want %v", tt.gv, got, tt.want)
			}
		})
	}
}

// fakeClients hands out one fake clientset for every name.
type fakeClients struct{ client *fake.Clientset }

func (f fakeClients) Config(string) (*rest.Config, error)         { return &rest.Config{}, nil }
func (f fakeClients) Client(string) (kubernetes.Interface, error) { return f.client, nil }

type idle struct{}

func (idle) Run(ctx context.Context, _ int) { <-ctx.Done() }

func TestStartBuildsEnabledServedControllersInOrder(t *testing.T) {
	client := fake.NewClientset()
	client.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{GroupVersion: "v1"}}
	var built []string
	build := func(name string) func(context.Context, *Context, kubernetes.Interface, record.EventRecorder) (Runner, int, error) {
		return func(context.Context, *Context, kubernetes.Interface, record.EventRecorder) (Runner, int, error) {
			built = append(built, name)
			return idle{}, 1, nil
		}
	}
	list := []Descriptor{
		{Name: "first", ClientName: "first", Build: build("first")},
		{Name: "rbac", ClientName: "rbac", Requires: []schema.GroupVersion{{Group: "rbac.authorization.k8s.io", Version: "v1"}}, Build: build("rbac")},
		{Name: "disabled", ClientName: "disabled", Build: build("disabled")},
		{Name: "optional", ClientName: "optional", OffByDefault: true, Build: build("optional")},
		{Name: "last", ClientName: "last", Build: build("last")},
	}
	cfg := kcmconfig.KubeControllerManagerConfiguration{}
	cfg.Generic.Controllers = []string{"*", "-disabled"}
	cc := &Context{
		Config:    &cfg,
		Clients:   fakeClients{client},
		Informers: informers.NewSharedInformerFactory(client, 0),
		Metadata:  metadatainformer.NewSharedInformerFactory(metadatafake.NewSimpleMetadataClient(metadatafake.NewTestScheme()), 0),
		Discovery: client.Discovery(),
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- Start(ctx, cc, list) }()
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if want := []string{"first", "last"}; !slices.Equal(built, want) {
		t.Errorf("built %v, want %v", built, want)
	}
}
