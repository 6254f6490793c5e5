package load

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// loadObject is the custom resource as a Go type, as an operator built with
// controller-runtime or a generated clientset sees its own kind: responses
// are decoded into structs, as client-go decodes ConfigMaps, rather than
// into unstructured maps, which cost the client several times more.
type loadObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Data              map[string]string `json:"data,omitempty"`
}

// loadObjectList is a page of loadObjects.
type loadObjectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []loadObject `json:"items"`
}

// typedCRKind runs the verbs on the custom resource over JSON, decoding
// into loadObject; watch and delete go through the dynamic client.
type typedCRKind struct {
	dynamicKind
	c  rest.Interface
	ns string
}

func (k typedCRKind) request(verb string) *rest.Request {
	return k.c.Verb(verb).AbsPath("/apis", loadGVR.Group, loadGVR.Version, "namespaces", k.ns, loadGVR.Resource)
}

// do sends r and decodes the answer into out.
func do(ctx context.Context, r *rest.Request, out any) error {
	body, err := r.Do(ctx).Raw()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("decode %s: %w", loadGVR.Resource, err)
	}
	return nil
}

func newLoadObject(name string, labels map[string]string) *loadObject {
	cm := newConfigMap(name, labels)
	return &loadObject{
		TypeMeta:   metav1.TypeMeta{APIVersion: loadGVR.GroupVersion().String(), Kind: "LoadObject"},
		ObjectMeta: cm.ObjectMeta,
		Data:       cm.Data,
	}
}

func (k typedCRKind) create(ctx context.Context, name string, labels map[string]string) (metav1.Object, error) {
	body, err := json.Marshal(newLoadObject(name, labels))
	if err != nil {
		return nil, err
	}
	out := &loadObject{}
	return out, do(ctx, k.request("POST").SetHeader("Content-Type", "application/json").Body(body), out)
}

func (k typedCRKind) get(ctx context.Context, name string) error {
	return do(ctx, k.request("GET").Suffix(name), &loadObject{})
}

func (k typedCRKind) list(ctx context.Context, opts metav1.ListOptions) (int, error) {
	r := k.request("GET")
	if opts.Limit > 0 {
		r = r.Param("limit", strconv.FormatInt(opts.Limit, 10))
	}
	if opts.LabelSelector != "" {
		r = r.Param("labelSelector", opts.LabelSelector)
	}
	l := &loadObjectList{}
	if err := do(ctx, r, l); err != nil {
		return 0, err
	}
	return len(l.Items), nil
}

func (k typedCRKind) update(ctx context.Context, obj metav1.Object, n int) (metav1.Object, error) {
	o, ok := obj.(*loadObject)
	if !ok {
		return nil, fmt.Errorf("update: got %T", obj)
	}
	copied := *o
	copied.Annotations = make(map[string]string, len(o.Annotations)+1)
	for key, v := range o.Annotations {
		copied.Annotations[key] = v
	}
	copied.Annotations["apiload/update"] = strconv.Itoa(n)
	copied.APIVersion, copied.Kind = loadGVR.GroupVersion().String(), "LoadObject"
	body, err := json.Marshal(&copied)
	if err != nil {
		return nil, err
	}
	out := &loadObject{}
	return out, do(ctx, k.request("PUT").Suffix(o.Name).SetHeader("Content-Type", "application/json").Body(body), out)
}

// patch uses a JSON merge patch: custom resources have no strategic merge.
func (k typedCRKind) patch(ctx context.Context, name string, n int) (metav1.Object, error) {
	body := fmt.Sprintf(`{"metadata":{"annotations":{"apiload/patch":%q}}}`, strconv.Itoa(n))
	out := &loadObject{}
	return out, do(ctx, k.request("PATCH").Suffix(name).SetHeader("Content-Type", string(types.MergePatchType)).Body([]byte(body)), out)
}

func (k typedCRKind) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return k.dynamicKind.watch(ctx, opts)
}
