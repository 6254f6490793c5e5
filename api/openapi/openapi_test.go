package openapi_test

import (
	"slices"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/builder"
	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"trireme.dev/api/openapi"
	"trireme.dev/api/scheme"
)

// definitions returns the generated definitions with references pointing into
// "#/definitions/", as the generic apiserver's spec builder resolves them.
func definitions() map[string]common.OpenAPIDefinition {
	return openapi.GetOpenAPIDefinitions(func(name string) spec.Ref {
		return spec.MustCreateRef("#/definitions/" + common.EscapeJsonPointer(name))
	})
}

// servedKinds returns the OpenAPI definition name of every external kind the
// scheme knows, computed as the generic apiserver's definition namer does.
func servedKinds(t *testing.T) map[schema.GroupVersionKind]string {
	t.Helper()
	s := scheme.NewExternal()
	names := map[schema.GroupVersionKind]string{}
	for gvk := range s.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		name, err := s.ToOpenAPIDefinitionName(gvk)
		if err != nil {
			t.Fatalf("definition name of %s: %v", gvk, err)
		}
		names[gvk] = name
	}
	return names
}

func TestServedKindsHaveDefinitions(t *testing.T) {
	defs := definitions()
	kinds := servedKinds(t)
	gvks := make([]schema.GroupVersionKind, 0, len(kinds))
	for gvk := range kinds {
		gvks = append(gvks, gvk)
	}
	sort.Slice(gvks, func(i, j int) bool { return gvks[i].String() < gvks[j].String() })
	for _, gvk := range gvks {
		name := kinds[gvk]
		t.Run(gvk.GroupVersion().String()+"/"+gvk.Kind, func(t *testing.T) {
			def, ok := defs[name]
			if !ok {
				t.Fatalf("no definition named %q", name)
			}
			if len(def.Schema.Properties) == 0 {
				t.Errorf("definition %q has no properties", name)
			}
		})
	}
}

func TestWellKnownDefinitions(t *testing.T) {
	defs := definitions()
	for _, tc := range []struct {
		name       string
		properties []string
	}{
		{"io.k8s.api.core.v1.Pod", []string{"apiVersion", "kind", "metadata", "spec", "status"}},
		{"io.k8s.api.core.v1.PodSpec", []string{"containers", "nodeName", "volumes"}},
		{"io.k8s.api.apps.v1.Deployment", []string{"apiVersion", "kind", "metadata", "spec", "status"}},
		{"io.k8s.api.apps.v1.DeploymentSpec", []string{"replicas", "selector", "template", "strategy"}},
		{"io.k8s.api.autoscaling.v1.Scale", []string{"metadata", "spec", "status"}},
		{"io.k8s.api.rbac.v1.ClusterRole", []string{"rules", "aggregationRule"}},
		{"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", []string{"name", "namespace", "labels", "managedFields"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def, ok := defs[tc.name]
			if !ok {
				t.Fatalf("no definition named %q", tc.name)
			}
			for _, p := range tc.properties {
				if _, ok := def.Schema.Properties[p]; !ok {
					t.Errorf("definition %q lacks property %q", tc.name, p)
				}
			}
		})
	}
}

// TestDependenciesDefined guards against a listed package referring to a type
// of a package that openapi-gen was not given: the spec builder fails on
// such a dangling reference only when a route serves the referring type.
func TestDependenciesDefined(t *testing.T) {
	defs := definitions()
	missing := map[string][]string{}
	for name, def := range defs {
		for _, dep := range def.Dependencies {
			if _, ok := defs[dep]; !ok {
				missing[dep] = append(missing[dep], name)
			}
		}
	}
	deps := make([]string, 0, len(missing))
	for dep := range missing {
		deps = append(deps, dep)
	}
	sort.Strings(deps)
	for _, dep := range deps {
		users := missing[dep]
		slices.Sort(users)
		t.Errorf("%q is referred to by %v but has no definition; add its package to hack/update-codegen.sh", dep, users)
	}
}

// TestBuildSpec builds OpenAPI v2 and v3 documents holding every served kind
// the way the generic apiserver does, so that a generated definition the
// builders reject fails here rather than at server start.
func TestBuildSpec(t *testing.T) {
	kinds := servedKinds(t)
	names := make([]string, 0, len(kinds))
	for _, name := range kinds {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	identity := func(name string) (string, spec.Extensions) { return name, nil }

	for _, tc := range []struct {
		name  string
		build func() (map[string]spec.Schema, error)
	}{
		{"openapi v2", func() (map[string]spec.Schema, error) {
			sw, err := builder.BuildOpenAPIDefinitionsForResources(&common.Config{
				GetDefinitions:    openapi.GetOpenAPIDefinitions,
				GetDefinitionName: identity,
			}, names...)
			if err != nil {
				return nil, err
			}
			return sw.Definitions, nil
		}},
		{"openapi v3", func() (map[string]spec.Schema, error) {
			schemas, err := builder3.BuildOpenAPIDefinitionsForResources(&common.OpenAPIV3Config{
				GetDefinitions:    openapi.GetOpenAPIDefinitions,
				GetDefinitionName: identity,
			}, names...)
			if err != nil {
				return nil, err
			}
			out := make(map[string]spec.Schema, len(schemas))
			for k, v := range schemas {
				out[k] = *v
			}
			return out, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			built, err := tc.build()
			if err != nil {
				t.Fatalf("build: %v", err)
			}
			for _, name := range append(names, "io.k8s.api.core.v1.PodSpec", "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta") {
				if len(built[name].Properties) == 0 {
					t.Errorf("built spec has no properties for %q", name)
				}
			}
		})
	}
}
