package registry

import (
	"context"
	"fmt"
	"reflect"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
)

// ScaleStore serves the autoscaling/v1 scale subresource of a workload whose
// spec has Replicas and Selector and whose status has Replicas.
type ScaleStore struct {
	main *Store
}

// NewScaleStore returns the scale subresource of main.
func NewScaleStore(main *Store) *ScaleStore { return &ScaleStore{main: main} }

// New implements rest.Storage.
func (s *ScaleStore) New() runtime.Object { return &autoscalingv1.Scale{} }

// Destroy implements rest.Storage.
func (s *ScaleStore) Destroy() {}

// GroupVersionKind implements rest.GroupVersionKindProvider: scale always
// speaks autoscaling/v1.
func (s *ScaleStore) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return autoscalingv1.SchemeGroupVersion.WithKind("Scale")
}

// Get implements rest.Getter.
func (s *ScaleStore) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := s.main.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	return scaleOf(obj)
}

// Update implements rest.Updater: it changes spec.replicas of the workload.
func (s *ScaleStore) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, _ bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	info := &scaleUpdate{inner: objInfo, gr: s.main.res.GroupResource()}
	obj, _, err := s.main.Update(ctx, name, info,
		func(ctx context.Context, obj runtime.Object) error {
			sc, err := scaleOf(obj)
			if err != nil {
				return err
			}
			return createValidation(ctx, sc)
		},
		func(ctx context.Context, obj, old runtime.Object) error {
			sc, err := scaleOf(obj)
			if err != nil {
				return err
			}
			oldSc, err := scaleOf(old)
			if err != nil {
				return err
			}
			return updateValidation(ctx, sc, oldSc)
		}, false, options)
	if err != nil {
		return nil, false, err
	}
	sc, err := scaleOf(obj)
	return sc, false, err
}

// ConvertToTable implements rest.TableConvertor.
func (s *ScaleStore) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	return rest.NewDefaultTableConvertor(s.main.res.GroupResource()).ConvertToTable(ctx, obj, tableOptions)
}

type scaleUpdate struct {
	inner rest.UpdatedObjectInfo
	gr    schema.GroupResource
}

func (u *scaleUpdate) Preconditions() *metav1.Preconditions { return u.inner.Preconditions() }

func (u *scaleUpdate) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	oldScale, err := scaleOf(oldObj)
	if err != nil {
		return nil, err
	}
	newObj, err := u.inner.UpdatedObject(ctx, oldScale)
	if err != nil {
		return nil, err
	}
	sc, ok := newObj.(*autoscalingv1.Scale)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("expected Scale, got %T", newObj))
	}
	if sc.Spec.Replicas < 0 {
		return nil, apierrors.NewInvalid(autoscalingv1.SchemeGroupVersion.WithKind("Scale").GroupKind(), sc.Name,
			field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), sc.Spec.Replicas, "must be greater than or equal to 0")})
	}
	out := oldObj.DeepCopyObject()
	replicas := structField(out, "Spec").FieldByName("Replicas")
	r := sc.Spec.Replicas
	if replicas.Kind() == reflect.Pointer {
		replicas.Set(reflect.ValueOf(&r))
	} else {
		replicas.SetInt(int64(r))
	}
	// A resourceVersion in the Scale is a precondition on the workload.
	if sc.ResourceVersion != "" {
		if m, err := meta.Accessor(out); err == nil {
			m.SetResourceVersion(sc.ResourceVersion)
		}
	}
	return out, nil
}

// scaleOf builds the Scale view of a workload.
func scaleOf(obj runtime.Object) (*autoscalingv1.Scale, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	spec, status := structField(obj, "Spec"), structField(obj, "Status")
	if !spec.IsValid() || !status.IsValid() {
		return nil, fmt.Errorf("%T has no spec or status", obj)
	}
	var replicas int32 = 1
	if r := spec.FieldByName("Replicas"); r.Kind() == reflect.Pointer && !r.IsNil() {
		replicas = int32(r.Elem().Int())
	}
	var selector string
	switch sel := spec.FieldByName("Selector").Interface().(type) {
	case *metav1.LabelSelector:
		if s, err := metav1.LabelSelectorAsSelector(sel); err == nil {
			selector = s.String()
		}
	case map[string]string:
		selector = labels.SelectorFromSet(sel).String()
	}
	return &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{
			Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
			ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: replicas},
		Status: autoscalingv1.ScaleStatus{Replicas: int32(status.FieldByName("Replicas").Int()), Selector: selector},
	}, nil
}
