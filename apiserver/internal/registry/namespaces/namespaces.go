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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"

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
			s.ShouldDeleteDuringUpdate = func(_ context.Context, _ string, obj, _ runtime.Object) bool {
				ns, ok := obj.(*corev1.Namespace)
				return ok && len(ns.Spec.Finalizers) == 0
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

// Store wraps the namespace store with upstream's two-step delete.
type Store struct {
	*registry.Store
}

// Delete marks the namespace Terminating while spec.finalizers remain, and
// removes it once they are gone.
func (s *Store) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	got, err := s.Get(ctx, name, &metav1.GetOptions{})
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
		return s.Store.Delete(ctx, name, deleteValidation, options)
	}
	if ns.DeletionTimestamp != nil && ns.Status.Phase == corev1.NamespaceTerminating {
		return ns, false, nil
	}
	if deleteValidation != nil {
		if err := deleteValidation(ctx, ns); err != nil {
			return nil, false, err
		}
	}
	key, err := s.KeyFunc(ctx, name)
	if err != nil {
		return nil, false, err
	}
	out := &corev1.Namespace{}
	err = s.Storage.GuaranteedUpdate(ctx, key, out, false, &storage.Preconditions{UID: &ns.UID}, storage.SimpleUpdate(func(obj runtime.Object) (runtime.Object, error) {
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
