package apiregistration

import (
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionslisters "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

func TestBuiltinAPIServices(t *testing.T) {
	prio := map[schema.GroupVersion]Priority{
		{Version: "v1"}:                {18000, 1},
		{Group: "apps", Version: "v1"}: {17800, 15},
	}
	tests := []struct {
		name  string
		paths []string
		want  []string
	}{
		{"core and groups", []string{"/api/v1", "/apis/apps/v1"}, []string{"v1.", "v1.apps"}},
		{"paths that are not group versions", []string{"/api", "/apis", "/apis/apps", "/healthz", "/openapi/v2"}, nil},
		{"group version without a priority", []string{"/apis/example.com/v1"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, s := range builtinAPIServices(tc.paths, prio) {
				got = append(got, s.Name)
				if s.Spec.Service != nil {
					t.Errorf("%s points at a Service; built-in groups are local", s.Name)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// recorder is an autoregister.AutoAPIServiceRegistration that remembers
// what it was asked to keep.
type recorder map[string]*apiregistrationv1.APIService

func (r recorder) AddAPIServiceToSyncOnStart(s *apiregistrationv1.APIService) { r[s.Name] = s }
func (r recorder) AddAPIServiceToSync(s *apiregistrationv1.APIService)        { r[s.Name] = s }
func (r recorder) RemoveAPIServiceToSync(name string)                         { delete(r, name) }

func TestCRDRegistrationSync(t *testing.T) {
	crd := func(name, group string, versions ...apiextensionsv1.CustomResourceDefinitionVersion) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       apiextensionsv1.CustomResourceDefinitionSpec{Group: group, Versions: versions},
		}
	}
	served := func(v string) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{Name: v, Served: true}
	}
	notServed := func(v string) apiextensionsv1.CustomResourceDefinitionVersion {
		return apiextensionsv1.CustomResourceDefinitionVersion{Name: v}
	}
	tests := []struct {
		name   string
		crds   []*apiextensionsv1.CustomResourceDefinition
		gv     schema.GroupVersion
		before []string
		want   []string
	}{
		{"served version registered", []*apiextensionsv1.CustomResourceDefinition{crd("as.example.com", "example.com", served("v1"))},
			schema.GroupVersion{Group: "example.com", Version: "v1"}, nil, []string{"v1.example.com"}},
		{"version no CRD serves unregistered", []*apiextensionsv1.CustomResourceDefinition{crd("as.example.com", "example.com", served("v1"), notServed("v2"))},
			schema.GroupVersion{Group: "example.com", Version: "v2"}, []string{"v2.example.com"}, nil},
		{"another CRD of the group keeps it", []*apiextensionsv1.CustomResourceDefinition{crd("as.example.com", "example.com", notServed("v1")), crd("bs.example.com", "example.com", served("v1"))},
			schema.GroupVersion{Group: "example.com", Version: "v1"}, nil, []string{"v1.example.com"}},
		{"deleted CRD unregistered", nil, schema.GroupVersion{Group: "example.com", Version: "v1"}, []string{"v1.example.com"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			for _, c := range tc.crds {
				if err := indexer.Add(c); err != nil {
					t.Fatal(err)
				}
			}
			rec := recorder{}
			for _, name := range tc.before {
				rec[name] = &apiregistrationv1.APIService{}
			}
			c := &crdRegistration{lister: apiextensionslisters.NewCustomResourceDefinitionLister(indexer), register: rec}
			if err := c.sync(tc.gv); err != nil {
				t.Fatal(err)
			}
			var got []string
			for name, s := range rec {
				got = append(got, name)
				if s.Spec.Version != "" && s.Spec.GroupPriorityMinimum != crdPriority.Group {
					t.Errorf("%s has group priority %d, want %d", name, s.Spec.GroupPriorityMinimum, crdPriority.Group)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("registered %v, want %v", got, tc.want)
			}
		})
	}
}
