package fieldselectors

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Fields returns the selectable fields of obj, a hub object (or a served
// external one), with their values: metadata.name, metadata.namespace for
// namespaced kinds, and the kind's own fields as upstream's GetAttrs gives
// them. Labels are the internal ones a field-label conversion yields.
func Fields(obj runtime.Object) fields.Set {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fields.Set{}
	}
	k, known := kinds[reflect.TypeOf(obj)]
	set := fields.Set{"metadata.name": m.GetName()}
	// A kind outside the table is taken as namespaced when it has a namespace.
	if known && !k.clusterScoped || !known && m.GetNamespace() != "" {
		set["metadata.namespace"] = m.GetNamespace()
	}
	if known && k.fields != nil {
		for label, value := range k.fields(obj) {
			set[label] = value
		}
	}
	return set
}

// AddToScheme registers a field-label conversion for every external kind in
// s (internal versions and meta/v1 kinds left out), so it must run after the
// served groups are installed. Kinds with their own fields accept exactly
// upstream's labels for their version; the others accept metadata.name and
// metadata.namespace, as upstream's default does, with the same errors.
func AddToScheme(s *runtime.Scheme) error {
	metaPkg := reflect.TypeOf(metav1.Status{}).PkgPath()
	for gvk, t := range s.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal || t.PkgPath() == metaPkg {
			continue
		}
		if err := s.AddFieldLabelConversionFunc(gvk, conversionFor(gvk)); err != nil {
			return fmt.Errorf("register field labels of %s: %w", gvk, err)
		}
	}
	return nil
}

// conversionFor returns the field-label conversion of one external kind.
func conversionFor(gvk schema.GroupVersionKind) runtime.FieldLabelConversionFunc {
	l, ok := labels[gvk.GroupKind()]
	if !ok {
		return runtime.DefaultMetaV1FieldSelectorConversion
	}
	return func(label, value string) (string, string, error) {
		internal, ok := l.accepted[label]
		if !ok {
			return "", "", l.unsupported(gvk, label)
		}
		return internal, value, nil
	}
}

// kindFields is what Fields knows of one hub Go type.
type kindFields struct {
	typ           reflect.Type
	clusterScoped bool
	// fields returns the kind's own fields, nil for kinds with only metadata.
	fields func(obj runtime.Object) fields.Set
}

// namespaced describes a namespaced kind T with optional own fields.
func namespaced[T runtime.Object](own func(T) fields.Set) kindFields {
	return kindFields{typ: reflect.TypeFor[T](), fields: adapt(own)}
}

// cluster describes a cluster-scoped kind T with optional own fields.
func cluster[T runtime.Object](own func(T) fields.Set) kindFields {
	return kindFields{typ: reflect.TypeFor[T](), clusterScoped: true, fields: adapt(own)}
}

func adapt[T runtime.Object](own func(T) fields.Set) func(runtime.Object) fields.Set {
	if own == nil {
		return nil
	}
	return func(obj runtime.Object) fields.Set {
		if typed, ok := obj.(T); ok {
			return own(typed)
		}
		return nil
	}
}

// labelSpec is the field-label conversion of a kind with its own fields.
type labelSpec struct {
	// accepted maps each label a client may send to the label Fields uses.
	accepted map[string]string
	// unsupported builds the error for any other label, worded as upstream's.
	unsupported func(gvk schema.GroupVersionKind, label string) error
}

// same accepts each label as itself.
func same(ls ...string) map[string]string {
	m := make(map[string]string, len(ls))
	for _, l := range ls {
		m[l] = l
	}
	return m
}

// notSupported is the wording of the core and events conversions.
func notSupported(_ schema.GroupVersionKind, label string) error {
	return fmt.Errorf("field label not supported: %s", label)
}

// notSupportedFor names the kind, as the resource.k8s.io conversion does.
func notSupportedFor(gvk schema.GroupVersionKind, label string) error {
	return fmt.Errorf("field label not supported for %s: %s", gvk, label)
}

// index keys kind descriptions by Go type and refuses duplicates.
func index(ks []kindFields) map[reflect.Type]kindFields {
	m := make(map[reflect.Type]kindFields, len(ks))
	for _, k := range ks {
		if _, dup := m[k.typ]; dup {
			panic(fmt.Sprintf("fieldselectors: %s listed twice", k.typ))
		}
		m[k.typ] = k
	}
	return m
}
