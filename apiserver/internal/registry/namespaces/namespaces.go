// Package namespaces holds what is special about namespaces: they start
// Active with the kubernetes finalizer, a delete first marks them
// Terminating until the namespace controller empties and finalizes them,
// and the finalize subresource edits spec.finalizers.
package namespaces

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"trireme.dev/api/validation"
	"trireme.dev/apiserver/internal/registry"
)

// nameLabel is the label upstream keeps equal to every namespace's name so
// selectors can pick namespaces by name.
const nameLabel = "kubernetes.io/metadata.name"

// Resource describes the namespaces resource.
func Resource() *registry.Resource {
	return &registry.Resource{
		GroupVersion: corev1.SchemeGroupVersion,
		Name:         "namespaces",
		Kind:         "Namespace",
		New:          func() runtime.Object { return &corev1.Namespace{} },
		NewList:      func() runtime.Object { return &corev1.NamespaceList{} },
		Status:       true,
		ShortNames:   []string{"ns"},
		Hooks: registry.Hooks{
			PrepareForCreate: func(_ context.Context, obj runtime.Object) {
				ns := obj.(*corev1.Namespace)
				ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
				if !hasFinalizer(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
					ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
				}
				setNameLabel(ns)
			},
			PrepareForUpdate: func(_ context.Context, obj, old runtime.Object) {
				ns := obj.(*corev1.Namespace)
				// Finalizers change only through the finalize subresource.
				ns.Spec.Finalizers = old.(*corev1.Namespace).Spec.Finalizers
				setNameLabel(ns)
			},
		},
		StoreHooks: func(s *genericregistry.Store) {
			// The generic store removes an object marked for deletion once an
			// update leaves no metadata.finalizers; a namespace also waits for
			// its spec.finalizers, which finalize clears once it is empty.
			s.ShouldDeleteDuringUpdate = func(ctx context.Context, key string, obj, existing runtime.Object) bool {
				ns, ok := obj.(*corev1.Namespace)
				return ok && len(ns.Spec.Finalizers) == 0 && genericregistry.ShouldDeleteDuringUpdate(ctx, key, obj, existing)
			}
		},
	}
}

func setNameLabel(ns *corev1.Namespace) {
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[nameLabel] = ns.Name
}

func hasFinalizer(list []corev1.FinalizerName, f corev1.FinalizerName) bool {
	for _, x := range list {
		if x == f {
			return true
		}
	}
	return false
}

// Store wraps the namespace store with upstream's two-step delete. It
// forwards explicitly rather than embedding so that, as upstream, namespaces
// offer no deletecollection: that would skip the Terminating step.
type Store struct {
	store *registry.Store
}

// NewStore wraps main.
func NewStore(main *registry.Store) *Store { return &Store{store: main} }

// New implements rest.Storage.
func (s *Store) New() runtime.Object { return s.store.New() }

// NewList implements rest.Lister.
func (s *Store) NewList() runtime.Object { return s.store.NewList() }

// Destroy implements rest.Storage.
func (s *Store) Destroy() { s.store.Destroy() }

// NamespaceScoped implements rest.Scoper.
func (s *Store) NamespaceScoped() bool { return false }

// GetSingularName implements rest.SingularNameProvider.
func (s *Store) GetSingularName() string { return s.store.GetSingularName() }

// ShortNames implements rest.ShortNamesProvider.
func (s *Store) ShortNames() []string { return s.store.ShortNames() }

// Get implements rest.Getter.
func (s *Store) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return s.store.Get(ctx, name, options)
}

// List implements rest.Lister.
func (s *Store) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	return s.store.List(ctx, options)
}

// Watch implements rest.Watcher.
func (s *Store) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	return s.store.Watch(ctx, options)
}

// Create implements rest.Creater.
func (s *Store) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	return s.store.Create(ctx, obj, createValidation, options)
}

// Update implements rest.Updater.
func (s *Store) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return s.store.Update(ctx, name, objInfo, createValidation, updateValidation, forceAllowCreate, options)
}

// ConvertToTable implements rest.TableConvertor.
func (s *Store) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return s.store.ConvertToTable(ctx, obj, tableOptions)
}

// GetResetFields implements rest.ResetFieldsStrategy.
func (s *Store) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return s.store.GetResetFields()
}

// StorageVersion implements rest.StorageVersionProvider.
func (s *Store) StorageVersion() runtime.GroupVersioner { return s.store.StorageVersion() }

// Delete marks the namespace Terminating while spec.finalizers remain, and
// removes it once they are gone.
func (s *Store) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	got, err := s.store.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, false, err
	}
	ns := got.(*corev1.Namespace)
	if options == nil {
		options = metav1.NewDeleteOptions(0)
	}
	if p := options.Preconditions; p != nil {
		if p.UID != nil && *p.UID != ns.UID {
			return nil, false, apierrors.NewConflict(corev1.Resource("namespaces"), name, fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, ns.UID))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != ns.ResourceVersion {
			return nil, false, apierrors.NewConflict(corev1.Resource("namespaces"), name, fmt.Errorf("precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, ns.ResourceVersion))
		}
	}
	if len(ns.Spec.Finalizers) == 0 {
		return s.store.Delete(ctx, name, deleteValidation, options)
	}
	if ns.DeletionTimestamp != nil && ns.Status.Phase == corev1.NamespaceTerminating {
		return ns, false, nil
	}
	if deleteValidation != nil {
		if err := deleteValidation(ctx, ns); err != nil {
			return nil, false, err
		}
	}
	key, err := s.store.KeyFunc(ctx, name)
	if err != nil {
		return nil, false, err
	}
	out := &corev1.Namespace{}
	err = s.store.Storage.GuaranteedUpdate(ctx, key, out, false, &storage.Preconditions{UID: &ns.UID}, storage.SimpleUpdate(func(obj runtime.Object) (runtime.Object, error) {
		ns := obj.(*corev1.Namespace)
		if ns.DeletionTimestamp == nil {
			now := metav1.Now()
			ns.DeletionTimestamp = &now
		}
		ns.Status.Phase = corev1.NamespaceTerminating
		if options.PropagationPolicy != nil && *options.PropagationPolicy == metav1.DeletePropagationOrphan && !hasString(ns.Finalizers, metav1.FinalizerOrphanDependents) {
			ns.Finalizers = append(ns.Finalizers, metav1.FinalizerOrphanDependents)
		}
		return ns, nil
	}), len(options.DryRun) > 0, nil)
	if err != nil {
		return nil, false, err
	}
	return out, false, nil
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// NewFinalizeStore returns namespaces/finalize, which writes only
// spec.finalizers.
func NewFinalizeStore(main *registry.Store) *registry.SubresourceStore {
	return registry.NewPartStore(main, registry.PartUpdate{
		Prepare: func(obj, old runtime.Object) {
			ns, oldNs := obj.(*corev1.Namespace), old.(*corev1.Namespace)
			finalizers := ns.Spec.Finalizers
			rv := ns.ResourceVersion
			*ns = *oldNs.DeepCopy()
			ns.Spec.Finalizers = finalizers
			ns.ResourceVersion = rv
		},
		Validate: func(obj, old runtime.Object) field.ErrorList {
			return validation.ValidateUpdate(obj, old)
		},
	})
}
