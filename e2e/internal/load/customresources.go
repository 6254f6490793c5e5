package load

import (
	"context"
	"fmt"
	"strconv"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// customResourceKind is the --kinds name of the custom resource the driver
// defines: a ConfigMap's shape and content as a CRD, so its figures compare
// with ConfigMaps'. Its client decodes into a Go type, as client-go does
// ConfigMaps; unstructuredCRKind is the same resource through the dynamic
// client, whose decoding into maps costs the client far more (on a shared
// machine, enough to halve list throughput by itself).
const (
	customResourceKind = "customresources"
	unstructuredCRKind = "customresources-unstructured"
)

// isCustomResourceKind says whether kind is the custom resource, whichever
// client.
func isCustomResourceKind(kind string) bool {
	return kind == customResourceKind || kind == unstructuredCRKind
}

// loadGVR is the custom resource's group, version and resource.
var loadGVR = schema.GroupVersionResource{Group: "apiload.trireme.dev", Version: "v1", Resource: "loadobjects"}

// loadCRD defines loadGVR: data is a string map, as a ConfigMap's.
func loadCRD(run string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: loadGVR.Resource + "." + loadGVR.Group, Labels: map[string]string{runLabel: run}},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: loadGVR.Group,
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: loadGVR.Resource, Singular: "loadobject", Kind: "LoadObject", ListKind: "LoadObjectList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: loadGVR.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"data": {Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{
							Allows: true, Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"},
						}},
					},
				}},
			}},
		},
	}
}

// ensureCRD creates crd unless it exists and waits until it is Established
// and its resource answers; it reports whether it created it.
func ensureCRD(ctx context.Context, c apiextensionsclient.Interface, crd *apiextensionsv1.CustomResourceDefinition) (bool, error) {
	created := true
	_, err := c.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		created = false
	case err != nil:
		return false, fmt.Errorf("create CRD %s: %w", crd.Name, err)
	}
	return created, waitEstablished(ctx, c, crd.Name)
}

// createGrace is how long after a CRD is Established that
// apiextensions-apiserver holds each create of its resource for two
// seconds, so that in an HA control plane every server has seen the CRD
// before its objects are read back.
const createGrace = 2 * time.Second

// waitCreatable waits until creates of the named CRD's resource are no
// longer held (createGrace): timed, that hold made a ten-second create
// phase of custom resources a fifth slower than it runs.
func waitCreatable(ctx context.Context, c apiextensionsclient.Interface, name string) error {
	crd, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get CRD %s: %w", name, err)
	}
	for _, cond := range crd.Status.Conditions {
		if cond.Type != apiextensionsv1.Established {
			continue
		}
		// The condition's time is in whole seconds; the rest is margin for
		// the clocks of the server and the driver.
		wait := time.Until(cond.LastTransitionTime.Add(createGrace + 1200*time.Millisecond))
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// waitEstablished waits until the named CRD is Established.
func waitEstablished(ctx context.Context, c apiextensionsclient.Interface, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := c.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not established: %w", name, err)
	}
	return nil
}

// dynamicKind runs the verbs on a custom resource through the dynamic
// client, as controllers of custom resources mostly do.
type dynamicKind struct {
	api dynamic.ResourceInterface
}

func newCustomResource(name string, labels map[string]string) *unstructured.Unstructured {
	cm := newConfigMap(name, labels)
	data := map[string]any{}
	for k, v := range cm.Data {
		data[k] = v
	}
	u := &unstructured.Unstructured{Object: map[string]any{"data": data}}
	u.SetAPIVersion(loadGVR.GroupVersion().String())
	u.SetKind("LoadObject")
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

func (k dynamicKind) create(ctx context.Context, name string, labels map[string]string) (metav1.Object, error) {
	return k.api.Create(ctx, newCustomResource(name, labels), metav1.CreateOptions{})
}

func (k dynamicKind) get(ctx context.Context, name string) error {
	_, err := k.api.Get(ctx, name, metav1.GetOptions{})
	return err
}

func (k dynamicKind) list(ctx context.Context, opts metav1.ListOptions) (int, error) {
	l, err := k.api.List(ctx, opts)
	if err != nil {
		return 0, err
	}
	return len(l.Items), nil
}

func (k dynamicKind) update(ctx context.Context, obj metav1.Object, n int) (metav1.Object, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("update: got %T", obj)
	}
	copied := u.DeepCopy()
	ann := copied.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann["apiload/update"] = strconv.Itoa(n)
	copied.SetAnnotations(ann)
	return k.api.Update(ctx, copied, metav1.UpdateOptions{})
}

// patch uses a JSON merge patch: custom resources have no strategic merge.
func (k dynamicKind) patch(ctx context.Context, name string, n int) (metav1.Object, error) {
	body := fmt.Sprintf(`{"metadata":{"annotations":{"apiload/patch":%q}}}`, strconv.Itoa(n))
	return k.api.Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
}

func (k dynamicKind) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return k.api.Watch(ctx, opts)
}

func (k dynamicKind) delete(ctx context.Context, name string) error {
	return k.api.Delete(ctx, name, metav1.DeleteOptions{})
}

func (k dynamicKind) deleteCollection(ctx context.Context, selector string) error {
	return k.api.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: selector})
}
