// Package configfile reads a component's --config file, written once for
// every component: a YAML or JSON document decoded strictly (unknown and
// duplicate fields are errors, as upstream's components make them) into
// the one kind the component expects, nested objects included, then
// defaulted and, if the component asks, validated. Errors name the file
// and, when the document is of another kind, the kind wanted and the kind
// found.
//
// The api module holds each kind's scheme, defaulting and validation; it
// cannot import this module, so the reading lives here.
package configfile

import (
	"fmt"
	"os"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// Kind is one configuration kind a component reads: T is a pointer to a
// type registered in Scheme, such as *kubeletv1beta1.KubeletConfiguration.
type Kind[T runtime.Object] struct {
	// Scheme holds T's kind and, for a kind that holds nested objects (a
	// KubeSchedulerConfiguration's plugin args), the kinds of those.
	Scheme *runtime.Scheme
	// Default fills what the file leaves unset; nil leaves T as decoded.
	Default func(T)
	// Validate reports what is wrong with the defaulted T; nil accepts
	// it. A component whose flags override the file validates after
	// applying them instead, and leaves this nil.
	Validate func(T) error
}

// Decode strictly decodes data, YAML or JSON, into T, decodes the nested
// objects of a T that has them (runtime.NestedObjectDecoder) as strictly,
// then defaults and validates it.
func (k Kind[T]) Decode(data []byte) (T, error) {
	var zero T
	want, err := k.groupVersionKind()
	if err != nil {
		return zero, err
	}
	decoder := serializer.NewCodecFactory(k.Scheme, serializer.EnableStrict).UniversalDeserializer()
	obj, got, err := decoder.Decode(data, nil, nil)
	switch {
	case runtime.IsNotRegisteredError(err) || runtime.IsMissingKind(err) || runtime.IsMissingVersion(err):
		return zero, fmt.Errorf("decode config: want %s: %w", describe(want), err)
	case err != nil:
		return zero, fmt.Errorf("decode config: %w", err)
	}
	cfg, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("decode config: got %s, want %s", describe(*got), describe(want))
	}
	if nested, ok := obj.(runtime.NestedObjectDecoder); ok {
		// As upstream's versioning codec does: the nested objects are
		// decoded as strictly, and keep no apiVersion and kind of their own.
		if err := nested.DecodeNestedObjects(runtime.WithoutVersionDecoder{Decoder: decoder}); err != nil {
			return zero, fmt.Errorf("decode config: %w", err)
		}
	}
	if k.Default != nil {
		k.Default(cfg)
	}
	if k.Validate != nil {
		if err := k.Validate(cfg); err != nil {
			return zero, fmt.Errorf("invalid %s: %w", want.Kind, err)
		}
	}
	return cfg, nil
}

// Load reads the file at path and decodes it as Decode does; its errors
// name the file.
func (k Kind[T]) Load(path string) (T, error) {
	return Load(path, k.Decode)
}

// Load reads the file at path and decodes it with decode, for a file
// that is not one kind (see Documents); its errors name the file.
func Load[T any](path string, decode func([]byte) (T, error)) (T, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("read config: %w", err)
	}
	v, err := decode(data)
	if err != nil {
		return v, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// groupVersionKind is the kind Scheme registers T as.
func (k Kind[T]) groupVersionKind() (schema.GroupVersionKind, error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer {
		return schema.GroupVersionKind{}, fmt.Errorf("configfile: %s is not a pointer to a kind", t)
	}
	if k.Scheme == nil {
		return schema.GroupVersionKind{}, fmt.Errorf("configfile: no scheme for %s", t)
	}
	gvks, _, err := k.Scheme.ObjectKinds(reflect.New(t.Elem()).Interface().(runtime.Object))
	if err != nil {
		return schema.GroupVersionKind{}, fmt.Errorf("configfile: %w", err)
	}
	return gvks[0], nil
}

// describe names a kind as a user writes it in a file.
func describe(gvk schema.GroupVersionKind) string {
	return fmt.Sprintf("%s (%s)", gvk.Kind, gvk.GroupVersion())
}
