package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"trireme.dev/api/fieldselectors"
	"trireme.dev/api/printers"
)

// Resource describes one served resource: where it lives, how it behaves,
// and which subresources it has.
type Resource struct {
	// GroupVersion is the served version; its Go type is the hub type.
	GroupVersion schema.GroupVersion
	// Name is the plural resource name ("deployments").
	Name string
	// Kind is the kind's name ("Deployment"); the singular name is its lower case.
	Kind string
	// New and NewList make empty hub objects.
	New, NewList func() runtime.Object
	// Namespaced resources live in a namespace.
	Namespaced bool
	// Status adds the status subresource and keeps status out of main-resource writes.
	Status bool
	// KeepStatusOnCreate lets a create set status (nodes register with theirs).
	KeepStatusOnCreate bool
	// Generation sets metadata.generation to 1 on create and bumps it on spec changes.
	Generation bool
	// Scale adds an autoscaling/v1 scale subresource (spec.replicas, status.replicas, selector).
	Scale bool
	// CreateOnUpdate lets a PUT create a missing object.
	CreateOnUpdate bool
	// GCPolicy is the garbage-collection policy of a delete without one;
	// empty means upstream's default, DeleteDependents.
	GCPolicy rest.GarbageCollectionPolicy
	// ShortNames and Categories are advertised in discovery (kubectl get po, kubectl get all).
	ShortNames, Categories []string
	// Hooks are the type-specific parts of the strategy.
	Hooks Hooks
	// StoreHooks adjust the built store (for example to add decorators).
	StoreHooks func(*genericregistry.Store)
}

// GroupResource returns the resource's group and name.
func (r *Resource) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.GroupVersion.Group, Resource: r.Name}
}

// Store is the REST storage of a resource: the generic etcd store plus the
// discovery details it advertises.
type Store struct {
	*genericregistry.Store
	res *Resource
}

// ShortNames implements rest.ShortNamesProvider.
func (s *Store) ShortNames() []string { return s.res.ShortNames }

// Categories implements rest.CategoriesProvider.
func (s *Store) Categories() []string { return s.res.Categories }

// NewStore builds the etcd-backed store of res.
func NewStore(res *Resource, opts generic.RESTOptionsGetter) (*Store, error) {
	strat := newStrategy(res)
	gr := res.GroupResource()
	store := &genericregistry.Store{
		NewFunc:                   res.New,
		NewListFunc:               res.NewList,
		DefaultQualifiedResource:  gr,
		SingularQualifiedResource: schema.GroupResource{Group: gr.Group, Resource: strings.ToLower(res.Kind)},
		CreateStrategy:            strat,
		UpdateStrategy:            strat,
		DeleteStrategy:            strat,
		ResetFieldsStrategy:       strat,
		TableConvertor:            tableConvertor{},
	}
	if res.StoreHooks != nil {
		res.StoreHooks(store)
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{
		RESTOptions: opts,
		AttrFunc:    attrs,
	}); err != nil {
		return nil, fmt.Errorf("complete %s store: %w", gr, err)
	}
	return &Store{Store: store, res: res}, nil
}

// NewStatusStore returns the status subresource storage sharing main's
// etcd store.
func NewStatusStore(main *Store) *SubresourceStore {
	return NewSubresourceStore(main, statusStrategy{newStrategy(main.res)})
}

// PartUpdate describes a subresource that writes one part of its object
// (pods/ephemeralcontainers, pods/resize).
type PartUpdate struct {
	// Prepare makes obj equal to old except for the part the subresource owns.
	Prepare func(obj, old runtime.Object)
	// Validate checks the update of the part.
	Validate func(obj, old runtime.Object) field.ErrorList
}

// NewPartStore returns a subresource of main that writes only p's part.
func NewPartStore(main *Store, p PartUpdate) *SubresourceStore {
	return NewSubresourceStore(main, partStrategy{strategy: newStrategy(main.res), part: p})
}

// NewSubresourceStore returns storage that reads main's objects and writes
// them through update.
func NewSubresourceStore(main *Store, update rest.RESTUpdateStrategy) *SubresourceStore {
	st := *main.Store
	st.UpdateStrategy = update
	if rs, ok := update.(rest.ResetFieldsStrategy); ok {
		st.ResetFieldsStrategy = rs
	}
	st.CreateStrategy = nil
	st.DeleteStrategy = nil
	return &SubresourceStore{store: &st}
}

// SubresourceStore serves GET, PUT and PATCH of a subresource whose object
// is the resource's own kind.
type SubresourceStore struct {
	store *genericregistry.Store
}

// New implements rest.Storage.
func (s *SubresourceStore) New() runtime.Object { return s.store.New() }

// Destroy implements rest.Storage; the main store owns the backend.
func (s *SubresourceStore) Destroy() {}

// Get implements rest.Getter.
func (s *SubresourceStore) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return s.store.Get(ctx, name, options)
}

// Update implements rest.Updater; subresources never create.
func (s *SubresourceStore) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	out, created, err := s.store.Update(ctx, name, undecodable{objInfo}, createValidation, updateValidation, false, options)
	return out, created, tooLarge(err)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (s *SubresourceStore) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return s.store.GetResetFields()
}

// ConvertToTable implements rest.TableConvertor.
func (s *SubresourceStore) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return s.store.ConvertToTable(ctx, obj, tableOptions)
}

// attrs returns the labels and selectable fields of obj for list and watch
// filtering.
func attrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	return labels.Set(m.GetLabels()), fieldselectors.Fields(obj), nil
}

type tableConvertor struct{}

func (tableConvertor) ConvertToTable(_ context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	noHeaders := false
	if o, ok := tableOptions.(*metav1.TableOptions); ok && o != nil {
		noHeaders = o.NoHeaders
	}
	return printers.ToTable(obj, noHeaders)
}

// Create implements rest.Creater, answering 413 when etcd refuses an object
// as too large rather than the 500 the raw storage error would give.
func (s *Store) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	out, err := s.Store.Create(ctx, obj, createValidation, options)
	return out, tooLarge(err)
}

// Update implements rest.Updater; see Create.
func (s *Store) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	out, created, err := s.Store.Update(ctx, name, undecodable{objInfo}, createValidation, updateValidation, forceAllowCreate, options)
	return out, created, tooLarge(err)
}

// undecodable answers 400 where a server-side apply produces an object that
// does not convert to its type (a Secret's value that is not base64): the
// field manager reports that as a plain error, which would be a 500.
type undecodable struct {
	rest.UpdatedObjectInfo
}

// UpdatedObject implements rest.UpdatedObjectInfo.
func (u undecodable) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	obj, err := u.UpdatedObjectInfo.UpdatedObject(ctx, oldObj)
	var status apierrors.APIStatus
	if err != nil && !errors.As(err, &status) && strings.Contains(err.Error(), "unable to convert unstructured object") {
		return obj, apierrors.NewBadRequest(fmt.Sprintf("the applied configuration is not a valid object: %v", err))
	}
	return obj, err
}

// etcdTooLarge is how etcd refuses a request over its size limit.
const etcdTooLarge = "etcdserver: request is too large"

func tooLarge(err error) error {
	if err != nil && strings.Contains(err.Error(), etcdTooLarge) {
		return apierrors.NewRequestEntityTooLargeError("the object is larger than etcd accepts (1.5 MiB)")
	}
	return err
}
