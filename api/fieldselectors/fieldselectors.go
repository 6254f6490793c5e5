package fieldselectors

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
)

// Fields returns the selectable fields of obj with their values.
func Fields(obj runtime.Object) fields.Set {
	m, err := meta.Accessor(obj)
	if err != nil {
		return fields.Set{}
	}
	set := fields.Set{"metadata.name": m.GetName()}
	if ns := m.GetNamespace(); ns != "" {
		set["metadata.namespace"] = ns
	}
	return set
}

// AddToScheme registers, for every served external kind, the field labels a
// field selector may use.
func AddToScheme(s *runtime.Scheme) error {
	return nil
}
