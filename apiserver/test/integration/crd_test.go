package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	"sigs.k8s.io/yaml"

	"trireme.dev/componentbase/testwait"
)

// testCRDGroupSuffix ends the group of every CRD these tests make, so the
// checks that walk discovery can tell them from the built-in groups.
const testCRDGroupSuffix = ".crd.it.trireme.dev"

// widgetCRD is a CRD with most of what CRDs can say: defaults, an enum, a
// CEL rule, preserved unknown fields, status and scale subresources,
// printer columns, short names, a category, a selectable field, and two
// versions converted by the None strategy.
const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.%[1]s
spec:
  group: %[1]s
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList, shortNames: [wdg], categories: [trireme-it]}
  versions:
  - name: v1
    served: true
    storage: true
    schema: &schema
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.replicas <= self.maxReplicas"
              message: "replicas must not exceed maxReplicas"
            properties:
              replicas: {type: integer, minimum: 0, default: 1}
              maxReplicas: {type: integer, default: 10}
              color: {type: string, enum: [red, green, blue]}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status:
            type: object
            properties:
              replicas: {type: integer}
              selector: {type: string}
    subresources: &subresources
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}
    additionalPrinterColumns: &columns
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Color, type: string, jsonPath: .spec.color}
    selectableFields: &selectable
    - jsonPath: .spec.color
  - name: v1beta1
    served: true
    storage: false
    schema: *schema
    subresources: *subresources
    additionalPrinterColumns: *columns
    selectableFields: *selectable
`

// crdClient is the apiextensions.k8s.io client of the admin user.
func crdClient(t *testing.T) apiextensionsclient.Interface {
	t.Helper()
	c, err := apiextensionsclient.NewForConfig(config)
	if err != nil {
		t.Fatalf("apiextensions client: %v", err)
	}
	return c
}

// createCRD creates the CRD that manifest (a format string taking the group)
// describes in a group of its own, waits until it is Established and its
// resources are in discovery, and returns it.
func createCRD(t *testing.T, manifest string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	group := uniqueName("g") + testCRDGroupSuffix
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict([]byte(fmt.Sprintf(manifest, group)), &crd); err != nil {
		t.Fatalf("decode CRD: %v", err)
	}
	ctx := testContext(t)
	created, err := crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Create(ctx, &crd, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	t.Cleanup(func() {
		err := crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Delete(context.WithoutCancel(ctx), created.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete CRD %s: %v", created.Name, err)
		}
	})
	testwait.For(t, 20*time.Second, "CRD established", func(ctx context.Context) (bool, error) {
		got, err := crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Get(ctx, created.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				created = got
				return true, nil
			}
		}
		return false, fmt.Errorf("conditions %v", got.Status.Conditions)
	})
	testwait.For(t, 20*time.Second, "CRD in discovery", func(ctx context.Context) (bool, error) {
		_, err := client.Discovery().ServerResourcesForGroupVersion(group + "/" + crd.Spec.Versions[0].Name)
		return err == nil, err
	})
	return created
}

func widgetObject(ns, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"kind":     "Widget",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"app": "widget"}},
		"spec":     spec,
	}}
}

func TestCustomResources(t *testing.T) {
	crd := createCRD(t, widgetCRD)
	group := crd.Spec.Group
	v1 := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}
	ns := newNamespace(t)
	widgets := dyn.Resource(v1).Namespace(ns)
	create := func(t *testing.T, name string, spec map[string]any) *unstructured.Unstructured {
		t.Helper()
		obj := widgetObject(ns, name, spec)
		obj.SetAPIVersion(group + "/v1")
		got, err := widgets.Create(testContext(t), obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create widget %s: %v", name, err)
		}
		return got
	}

	t.Run("legacy discovery", func(t *testing.T) {
		list, err := client.Discovery().ServerResourcesForGroupVersion(group + "/v1")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range list.APIResources {
			names = append(names, r.Name)
			if r.Name == "widgets" {
				if !slices.Equal(r.ShortNames, []string{"wdg"}) || !slices.Equal(r.Categories, []string{"trireme-it"}) || !r.Namespaced || r.Kind != "Widget" {
					t.Errorf("widgets: got %+v", r)
				}
			}
		}
		slices.Sort(names)
		if want := []string{"widgets", "widgets/scale", "widgets/status"}; !slices.Equal(names, want) {
			t.Errorf("resources %v, want %v", names, want)
		}
		groups, err := client.Discovery().ServerGroups()
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range groups.Groups {
			if g.Name == group {
				if g.PreferredVersion.Version != "v1" || len(g.Versions) != 2 {
					t.Errorf("group %s: got %+v, want v1 preferred of two versions", group, g)
				}
				return
			}
		}
		t.Errorf("/apis does not list %s", group)
	})

	t.Run("aggregated discovery", func(t *testing.T) {
		testwait.For(t, 20*time.Second, "group in aggregated discovery", func(ctx context.Context) (bool, error) {
			body, err := client.Discovery().RESTClient().Get().AbsPath("/apis").
				SetHeader("Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList").DoRaw(ctx)
			if err != nil {
				return false, err
			}
			var list struct {
				Kind  string `json:"kind"`
				Items []struct {
					Metadata metav1.ObjectMeta `json:"metadata"`
					Versions []struct {
						Version   string `json:"version"`
						Resources []struct {
							Resource   string   `json:"resource"`
							ShortNames []string `json:"shortNames"`
						} `json:"resources"`
					} `json:"versions"`
				} `json:"items"`
			}
			if err := json.Unmarshal(body, &list); err != nil {
				return false, err
			}
			if list.Kind != "APIGroupDiscoveryList" {
				return false, fmt.Errorf("got kind %q", list.Kind)
			}
			for _, g := range list.Items {
				if g.Metadata.Name == group && len(g.Versions) == 2 && g.Versions[0].Version == "v1" &&
					len(g.Versions[0].Resources) == 1 && g.Versions[0].Resources[0].Resource == "widgets" {
					return true, nil
				}
			}
			return false, fmt.Errorf("%s not listed with widgets", group)
		})
	})

	t.Run("APIService registered", func(t *testing.T) {
		agg := aggregatorclient.NewForConfigOrDie(config)
		testwait.For(t, 20*time.Second, "APIService v1."+group, func(ctx context.Context) (bool, error) {
			s, err := agg.ApiregistrationV1().APIServices().Get(ctx, "v1."+group, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return s.Spec.Service == nil && s.Spec.GroupPriorityMinimum == 1000, nil
		})
	})

	t.Run("defaulting and pruning", func(t *testing.T) {
		got := create(t, uniqueName("w"), map[string]any{"color": "red", "unknown": "x", "extra": map[string]any{"anything": "kept"}})
		spec, _, _ := unstructured.NestedMap(got.Object, "spec")
		if spec["replicas"] != int64(1) || spec["maxReplicas"] != int64(10) {
			t.Errorf("defaults not applied: spec %v", spec)
		}
		if _, ok := spec["unknown"]; ok {
			t.Errorf("unknown field not pruned: spec %v", spec)
		}
		if v, _, _ := unstructured.NestedString(spec, "extra", "anything"); v != "kept" {
			t.Errorf("preserved field lost: spec %v", spec)
		}
	})

	t.Run("schema violation", func(t *testing.T) {
		obj := widgetObject(ns, uniqueName("w"), map[string]any{"color": "purple", "replicas": int64(-1)})
		obj.SetAPIVersion(group + "/v1")
		_, err := widgets.Create(testContext(t), obj, metav1.CreateOptions{})
		se := wantStatus(t, err, 422)
		wantCause(t, se, "spec.color")
		wantCause(t, se, "spec.replicas")
	})

	t.Run("CEL rule", func(t *testing.T) {
		obj := widgetObject(ns, uniqueName("w"), map[string]any{"replicas": int64(20), "maxReplicas": int64(5)})
		obj.SetAPIVersion(group + "/v1")
		_, err := widgets.Create(testContext(t), obj, metav1.CreateOptions{})
		se := wantStatus(t, err, 422)
		if !strings.Contains(se.ErrStatus.Message, "replicas must not exceed maxReplicas") {
			t.Errorf("message %q does not carry the rule's message", se.ErrStatus.Message)
		}
		wantCause(t, se, "spec")
	})

	t.Run("status and scale subresources", func(t *testing.T) {
		ctx := testContext(t)
		w := create(t, uniqueName("w"), map[string]any{"color": "green"})
		// Status written through the main resource is ignored.
		_ = unstructured.SetNestedField(w.Object, int64(7), "status", "replicas")
		w, err := widgets.Update(ctx, w, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(w.Object, "status", "replicas"); found {
			t.Errorf("status set through the main resource: %v", w.Object["status"])
		}
		_ = unstructured.SetNestedField(w.Object, int64(2), "status", "replicas")
		_ = unstructured.SetNestedField(w.Object, "app=widget", "status", "selector")
		_ = unstructured.SetNestedField(w.Object, int64(3), "spec", "replicas")
		w, err = widgets.UpdateStatus(ctx, w, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update status: %v", err)
		}
		if r, _, _ := unstructured.NestedInt64(w.Object, "status", "replicas"); r != 2 {
			t.Errorf("status.replicas %d after status update, want 2", r)
		}
		if r, _, _ := unstructured.NestedInt64(w.Object, "spec", "replicas"); r != 1 {
			t.Errorf("spec changed through the status subresource: replicas %d", r)
		}
		scale, err := widgets.Get(ctx, w.GetName(), metav1.GetOptions{}, "scale")
		if err != nil {
			t.Fatalf("get scale: %v", err)
		}
		if r, _, _ := unstructured.NestedInt64(scale.Object, "spec", "replicas"); r != 1 || scale.GetKind() != "Scale" {
			t.Errorf("scale %v, want a Scale of 1 replica", scale.Object)
		}
		if sel, _, _ := unstructured.NestedString(scale.Object, "status", "selector"); sel != "app=widget" {
			t.Errorf("scale selector %q", sel)
		}
		_ = unstructured.SetNestedField(scale.Object, int64(4), "spec", "replicas")
		if _, err := widgets.Update(ctx, scale, metav1.UpdateOptions{}, "scale"); err != nil {
			t.Fatalf("update scale: %v", err)
		}
		w, err = widgets.Get(ctx, w.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r, _, _ := unstructured.NestedInt64(w.Object, "spec", "replicas"); r != 4 {
			t.Errorf("spec.replicas %d after scaling to 4", r)
		}
	})

	t.Run("printer columns", func(t *testing.T) {
		create(t, uniqueName("w"), map[string]any{"color": "blue"})
		var table metav1.Table
		err := client.Discovery().RESTClient().Get().AbsPath("/apis", group, "v1", "namespaces", ns, "widgets").
			SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(testContext(t)).Into(&table)
		if err != nil {
			t.Fatal(err)
		}
		var cols []string
		for _, c := range table.ColumnDefinitions {
			cols = append(cols, c.Name)
		}
		if !slices.Contains(cols, "Replicas") || !slices.Contains(cols, "Color") {
			t.Errorf("columns %v, want Replicas and Color", cols)
		}
	})

	t.Run("field selector", func(t *testing.T) {
		ctx := testContext(t)
		create(t, uniqueName("w"), map[string]any{"color": "red"})
		list, err := widgets.List(ctx, metav1.ListOptions{FieldSelector: "spec.color=red"})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) == 0 {
			t.Fatal("no red widgets listed")
		}
		for _, w := range list.Items {
			if c, _, _ := unstructured.NestedString(w.Object, "spec", "color"); c != "red" {
				t.Errorf("%s of color %q listed for spec.color=red", w.GetName(), c)
			}
		}
		_, err = widgets.List(ctx, metav1.ListOptions{FieldSelector: "spec.size=big"})
		wantStatus(t, err, 400)
	})

	t.Run("versions", func(t *testing.T) {
		w := create(t, uniqueName("w"), map[string]any{"color": "red"})
		beta := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1beta1", Resource: "widgets"}).Namespace(ns)
		got, err := beta.Get(testContext(t), w.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetAPIVersion() != group+"/v1beta1" || got.GetUID() != w.GetUID() {
			t.Errorf("got %s %s, want the same object as %s/v1beta1", got.GetAPIVersion(), got.GetUID(), group)
		}
	})

	t.Run("server-side apply", func(t *testing.T) {
		ctx := testContext(t)
		name := uniqueName("w")
		body := fmt.Sprintf(`{"apiVersion":%q,"kind":"Widget","metadata":{"name":%q},"spec":{"color":"green","replicas":2}}`, group+"/v1", name)
		got, err := widgets.Patch(ctx, name, types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: "it-apply"})
		if err != nil {
			t.Fatalf("apply: %v", err)
		}
		if !managedBy(got, "it-apply", metav1.ManagedFieldsOperationApply) {
			t.Errorf("managedFields %v lack it-apply", got.GetManagedFields())
		}
		// Another manager taking the same field conflicts.
		body = fmt.Sprintf(`{"apiVersion":%q,"kind":"Widget","metadata":{"name":%q},"spec":{"color":"blue"}}`, group+"/v1", name)
		_, err = widgets.Patch(ctx, name, types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: "it-other"})
		wantStatus(t, err, 409)
	})

	t.Run("watch", func(t *testing.T) {
		ctx := testContext(t)
		list, err := widgets.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := widgets.Watch(ctx, metav1.ListOptions{FieldSelector: "spec.color=blue", ResourceVersion: list.GetResourceVersion()})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		create(t, uniqueName("w"), map[string]any{"color": "green"})
		want := create(t, uniqueName("w"), map[string]any{"color": "blue"})
		rec := record(w)
		evs := rec.waitFor(t, func(evs []watch.Event) bool { return len(evs) > 0 })
		if got := evs[0].Object.(*unstructured.Unstructured); evs[0].Type != watch.Added || got.GetName() != want.GetName() {
			t.Errorf("first event %s %s, want ADDED %s", evs[0].Type, got.GetName(), want.GetName())
		}
	})

	t.Run("owner references", func(t *testing.T) {
		ctx := testContext(t)
		owner := create(t, uniqueName("w"), map[string]any{"color": "red"})
		cm, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Name: uniqueName("owned"),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: group + "/v1", Kind: "Widget", Name: owner.GetName(), UID: owner.GetUID(),
			}},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create ConfigMap owned by a Widget: %v", err)
		}
		if refs := cm.OwnerReferences; len(refs) != 1 || refs[0].UID != owner.GetUID() {
			t.Errorf("ownerReferences %v", refs)
		}
	})

	t.Run("OpenAPI", func(t *testing.T) {
		testwait.For(t, 20*time.Second, "widget schema in OpenAPI v3", func(ctx context.Context) (bool, error) {
			body, err := client.Discovery().RESTClient().Get().AbsPath("/openapi/v3/apis", group, "v1").DoRaw(ctx)
			if err != nil {
				return false, err
			}
			return strings.Contains(string(body), "replicas must not exceed maxReplicas") || strings.Contains(string(body), `"maxReplicas"`), nil
		})
		testwait.For(t, 20*time.Second, "widget definition in OpenAPI v2", func(ctx context.Context) (bool, error) {
			body, err := client.Discovery().RESTClient().Get().AbsPath("/openapi/v2").SetHeader("Accept", "application/json").DoRaw(ctx)
			if err != nil {
				return false, err
			}
			return strings.Contains(string(body), `"/apis/`+group+`/v1/namespaces/{namespace}/widgets"`), nil
		})
	})

	t.Run("deleting the CRD deletes its objects", func(t *testing.T) {
		// Its own CRD, so the other subtests keep theirs.
		crd := createCRD(t, widgetCRD)
		res := dyn.Resource(schema.GroupVersionResource{Group: crd.Spec.Group, Version: "v1", Resource: "widgets"}).Namespace(ns)
		obj := widgetObject(ns, "doomed", map[string]any{"color": "red"})
		obj.SetAPIVersion(crd.Spec.Group + "/v1")
		ctx := testContext(t)
		if _, err := res.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		crds := crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
		if err := crds.Delete(ctx, crd.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		testwait.For(t, 20*time.Second, "CRD gone", func(ctx context.Context) (bool, error) {
			_, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), err
		})
		// Recreated, the CRD starts empty: the objects went with it.
		crd.ObjectMeta = metav1.ObjectMeta{Name: crd.Name}
		crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
		if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			t.Fatalf("recreate CRD: %v", err)
		}
		testwait.For(t, 20*time.Second, "recreated CRD served and empty", func(ctx context.Context) (bool, error) {
			list, err := res.List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			return len(list.Items) == 0, fmt.Errorf("%d objects survived", len(list.Items))
		})
	})
}

// TestInvalidCRDs checks that a CRD whose schema is not structural or whose
// rules do not compile is refused with the field paths at fault. As
// upstream, a schema every version shares is reported at spec.validation.
func TestInvalidCRDs(t *testing.T) {
	cases := []struct {
		name, schema, field string
	}{
		{"property without type", `{type: object, properties: {spec: {properties: {a: {type: string}}}}}`,
			"spec.validation.openAPIV3Schema.properties[spec].type"},
		{"CEL rule that does not compile", `{type: object, x-kubernetes-validations: [{rule: "self.nosuchfield +"}], properties: {spec: {type: object}}}`,
			"spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule"},
		{"unknown type", `{type: object, properties: {spec: {type: strange}}}`,
			"spec.validation.openAPIV3Schema.properties[spec].type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			group := uniqueName("bad") + testCRDGroupSuffix
			manifest := fmt.Sprintf(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.%[1]s}
spec:
  group: %[1]s
  scope: Cluster
  names: {plural: things, kind: Thing}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: %[2]s}
`, group, tc.schema)
			var crd apiextensionsv1.CustomResourceDefinition
			if err := yaml.UnmarshalStrict([]byte(manifest), &crd); err != nil {
				t.Fatalf("decode: %v", err)
			}
			_, err := crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Create(testContext(t), &crd, metav1.CreateOptions{})
			wantCause(t, wantStatus(t, err, 422), tc.field)
		})
	}
}
