// Package ownership is how a controller claims the objects its selector
// matches: it adopts orphans, keeps its own and releases those whose labels
// no longer match, through controller owner references (upstream's
// ControllerRefManager).
package ownership

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// Patcher applies a strategic merge patch to the named object in the
// owner's namespace.
type Patcher func(ctx context.Context, namespace, name string, patch []byte) error

// Claimer claims objects for one owner.
type Claimer struct {
	Owner    metav1.Object
	Kind     schema.GroupVersionKind
	Selector labels.Selector
	Patch    Patcher
	// CanAdopt re-reads the owner from the API before the first adoption
	// and fails if it is gone or being deleted, so that a stale cache
	// cannot make a deleted owner adopt.
	CanAdopt func(ctx context.Context) error
	// Finalizers are added to an object with its adoption and removed
	// with its release, as the Job controller's tracking finalizer is:
	// an object the owner no longer counts must not stay held by it.
	Finalizers []string
	checked    bool
	adoptErr   error
}

// Ref returns the controller owner reference to owner of kind.
func Ref(owner metav1.Object, kind schema.GroupVersionKind) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         kind.GroupVersion().String(),
		Kind:               kind.Kind,
		Name:               owner.GetName(),
		UID:                owner.GetUID(),
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

// Claim returns the objects of objs that belong to the owner after
// adopting and releasing as needed. Errors of single objects are collected
// and the first is returned beside the claimed ones.
func Claim[T metav1.Object](ctx context.Context, c *Claimer, objs []T) ([]T, error) {
	var claimed []T
	var firstErr error
	for _, o := range objs {
		ok, err := c.claimOne(ctx, o)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if ok {
			claimed = append(claimed, o)
		}
	}
	return claimed, firstErr
}

func (c *Claimer) claimOne(ctx context.Context, o metav1.Object) (bool, error) {
	match := c.Selector.Matches(labels.Set(o.GetLabels()))
	if ref := metav1.GetControllerOfNoCopy(o); ref != nil {
		if ref.UID != c.Owner.GetUID() {
			return false, nil
		}
		if match {
			return true, nil
		}
		// A deleting owner keeps what it has so the garbage collector can
		// take it down with it.
		if c.Owner.GetDeletionTimestamp() != nil {
			return false, nil
		}
		if err := c.release(ctx, o); err != nil {
			if apierrors.IsNotFound(err) {
				return false, nil
			}
			return false, err
		}
		return false, nil
	}
	if c.Owner.GetDeletionTimestamp() != nil || !match || o.GetDeletionTimestamp() != nil {
		return false, nil
	}
	if err := c.adopt(ctx, o); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

func (c *Claimer) adopt(ctx context.Context, o metav1.Object) error {
	if !c.checked {
		c.checked = true
		if c.CanAdopt != nil {
			c.adoptErr = c.CanAdopt(ctx)
		}
	}
	if c.adoptErr != nil {
		return fmt.Errorf("cannot adopt %s: %w", o.GetName(), c.adoptErr)
	}
	meta := map[string]any{
		"ownerReferences": []metav1.OwnerReference{Ref(c.Owner, c.Kind)},
		"uid":             o.GetUID(),
	}
	if len(c.Finalizers) > 0 {
		meta["finalizers"] = c.Finalizers
	}
	patch, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, o.GetNamespace(), o.GetName(), patch); err != nil {
		return fmt.Errorf("adopt %s: %w", o.GetName(), err)
	}
	return nil
}

func (c *Claimer) release(ctx context.Context, o metav1.Object) error {
	patch, err := ReleasePatch(c.Owner.GetUID(), o.GetUID(), c.Finalizers...)
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, o.GetNamespace(), o.GetName(), patch); err != nil {
		return fmt.Errorf("release %s: %w", o.GetName(), err)
	}
	return nil
}

// ReleasePatch is the strategic merge patch that removes the owner
// reference to owner, and finalizers, from the object whose UID is uid.
func ReleasePatch(owner, uid types.UID, finalizers ...string) ([]byte, error) {
	meta := map[string]any{
		"ownerReferences": []map[string]any{{"$patch": "delete", "uid": owner}},
		"uid":             uid,
	}
	if len(finalizers) > 0 {
		meta["$deleteFromPrimitiveList/finalizers"] = finalizers
	}
	return json.Marshal(map[string]any{"metadata": meta})
}

// RecheckOwner returns a CanAdopt function: get re-reads the owner, which
// must still have uid and not be deleting.
func RecheckOwner(uid types.UID, get func(ctx context.Context) (metav1.Object, error)) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		fresh, err := get(ctx)
		if err != nil {
			return err
		}
		if fresh.GetUID() != uid {
			return fmt.Errorf("original owner %v is gone: got uid %v", uid, fresh.GetUID())
		}
		if fresh.GetDeletionTimestamp() != nil {
			return fmt.Errorf("owner %s is being deleted", fresh.GetName())
		}
		return nil
	}
}
