package registry

import (
	"context"
	"reflect"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"trireme.dev/api/scheme"
	"trireme.dev/api/validation"
)

// Hooks are the type-specific parts of a resource's strategy. Any may be nil.
type Hooks struct {
	// PrepareForCreate runs after the shared create preparation.
	PrepareForCreate func(ctx context.Context, obj runtime.Object)
	// PrepareForUpdate runs after the shared update preparation.
	PrepareForUpdate func(ctx context.Context, obj, old runtime.Object)
	// PrepareForStatusUpdate runs after the status subresource's preparation.
	PrepareForStatusUpdate func(ctx context.Context, obj, old runtime.Object)
	// ValidateCreate and ValidateUpdate replace the shared validation when set.
	ValidateCreate func(obj runtime.Object) field.ErrorList
	ValidateUpdate func(obj, old runtime.Object) field.ErrorList
	// Validate adds checks that need server state (allocations, lookups).
	Validate func(ctx context.Context, obj runtime.Object) field.ErrorList
	// CheckGracefulDelete decides whether a delete is graceful and sets its
	// grace period; see rest.RESTGracefulDeleteStrategy. Nil: deletes are
	// immediate.
	CheckGracefulDelete func(ctx context.Context, obj runtime.Object, options *metav1.DeleteOptions) bool
}

// strategy is the create/update/delete behaviour shared by every resource:
// validation from trireme.dev/api/validation, status kept out of the main
// resource when it has a status subresource, and metadata.generation bumped
// on spec changes as upstream does for objects with observedGeneration.
type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
	res *Resource
}

func newStrategy(res *Resource) *strategy {
	return &strategy{ObjectTyper: scheme.Scheme, NameGenerator: names.SimpleNameGenerator, res: res}
}

func (s *strategy) NamespaceScoped() bool { return s.res.Namespaced }

func (s *strategy) AllowCreateOnUpdate(context.Context) bool { return s.res.CreateOnUpdate }

func (s *strategy) AllowUnconditionalUpdate(context.Context) bool { return true }

func (s *strategy) Canonicalize(runtime.Object) {}

func (s *strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

func (s *strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// CheckGracefulDelete implements rest.RESTGracefulDeleteStrategy.
func (s *strategy) CheckGracefulDelete(ctx context.Context, obj runtime.Object, options *metav1.DeleteOptions) bool {
	if s.res.Hooks.CheckGracefulDelete == nil {
		return false
	}
	return s.res.Hooks.CheckGracefulDelete(ctx, obj, options)
}

// DefaultGarbageCollectionPolicy implements rest.GarbageCollectionDeleteStrategy.
func (s *strategy) DefaultGarbageCollectionPolicy(context.Context) rest.GarbageCollectionPolicy {
	if s.res.GCPolicy != "" {
		return s.res.GCPolicy
	}
	return rest.DeleteDependents
}

func (s *strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	if s.res.Status && !s.res.KeepStatusOnCreate {
		clearField(obj, "Status")
	}
	if s.res.Generation {
		if m, err := meta.Accessor(obj); err == nil {
			m.SetGeneration(1)
		}
	}
	if s.res.Hooks.PrepareForCreate != nil {
		s.res.Hooks.PrepareForCreate(ctx, obj)
	}
}

func (s *strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	if s.res.Status {
		copyField(obj, old, "Status")
	}
	if s.res.Generation {
		bumpGenerationOnSpecChange(obj, old)
	}
	if s.res.Hooks.PrepareForUpdate != nil {
		s.res.Hooks.PrepareForUpdate(ctx, obj, old)
	}
}

func (s *strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	validate := validation.ValidateCreate
	if s.res.Hooks.ValidateCreate != nil {
		validate = s.res.Hooks.ValidateCreate
	}
	errs := validate(obj)
	if s.res.Hooks.Validate != nil {
		errs = append(errs, s.res.Hooks.Validate(ctx, obj)...)
	}
	return errs
}

func (s *strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	validate := validation.ValidateUpdate
	if s.res.Hooks.ValidateUpdate != nil {
		validate = s.res.Hooks.ValidateUpdate
	}
	errs := validate(obj, old)
	if s.res.Hooks.Validate != nil {
		errs = append(errs, s.res.Hooks.Validate(ctx, obj)...)
	}
	return errs
}

// GetResetFields tells server-side apply which fields the main resource
// never writes, so managers of the main resource do not own them.
func (s *strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	if !s.res.Status {
		return nil
	}
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(s.res.GroupVersion.String()): fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
	}
}

// statusStrategy serves the status subresource: only status (and metadata)
// change; the spec is taken from the stored object.
type statusStrategy struct {
	*strategy
}

func (s statusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	copyField(obj, old, "Spec")
	if s.res.Hooks.PrepareForStatusUpdate != nil {
		s.res.Hooks.PrepareForStatusUpdate(ctx, obj, old)
	}
}

func (s statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateStatusUpdate(obj, old)
}

func (s statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(s.res.GroupVersion.String()): fieldpath.NewSet(fieldpath.MakePathOrDie("spec")),
	}
}

// structField returns the addressable field name of the struct obj points
// to, or an invalid Value when it has none.
func structField(obj runtime.Object, name string) reflect.Value {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return reflect.Value{}
	}
	return v.Elem().FieldByName(name)
}

func clearField(obj runtime.Object, name string) {
	if f := structField(obj, name); f.IsValid() && f.CanSet() {
		f.Set(reflect.Zero(f.Type()))
	}
}

func copyField(dst, src runtime.Object, name string) {
	d, s := structField(dst, name), structField(src, name)
	if d.IsValid() && s.IsValid() && d.CanSet() {
		d.Set(s)
	}
}

func bumpGenerationOnSpecChange(obj, old runtime.Object) {
	n, o := structField(obj, "Spec"), structField(old, "Spec")
	newMeta, err1 := meta.Accessor(obj)
	oldMeta, err2 := meta.Accessor(old)
	if err1 != nil || err2 != nil {
		return
	}
	gen := oldMeta.GetGeneration()
	if n.IsValid() && o.IsValid() && !apiequality.Semantic.DeepEqual(n.Interface(), o.Interface()) {
		gen++
	}
	newMeta.SetGeneration(gen)
}

var (
	_ rest.RESTCreateStrategy  = &strategy{}
	_ rest.RESTUpdateStrategy  = &strategy{}
	_ rest.ResetFieldsStrategy = &strategy{}
	_ rest.RESTUpdateStrategy  = statusStrategy{}
)

// partStrategy writes one part of an object; see PartUpdate.
type partStrategy struct {
	*strategy
	part PartUpdate
}

func (s partStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	s.part.Prepare(obj, old)
	// A part that changes the spec (a pod's ephemeral containers or
	// resources) is a new generation as a full update is.
	if s.res.Generation {
		bumpGenerationOnSpecChange(obj, old)
	}
}

func (s partStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return s.part.Validate(obj, old)
}

func (s partStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set { return nil }
