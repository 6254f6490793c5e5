package validation

import (
	"reflect"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// object is what every served kind is: a runtime.Object with ObjectMeta.
type object interface {
	runtime.Object
	metav1.Object
}

// kindRules is the type-erased view of a kind's rules that the exported
// entry points dispatch to.
type kindRules interface {
	create(obj runtime.Object) field.ErrorList
	update(obj, old runtime.Object) field.ErrorList
	status(obj, old runtime.Object) field.ErrorList
	nameFunc() apimachineryvalidation.ValidateNameFunc
}

// kind holds the rules of one served kind. Metadata checks are added by the
// methods below so that a kind only lists what is particular to it.
type kind[T object] struct {
	// cluster marks cluster-scoped kinds: they must not have a namespace.
	cluster bool
	// name checks metadata.name and generateName; nil means DNS-1123 subdomain.
	name apimachineryvalidation.ValidateNameFunc
	// ownMeta is set for kinds whose spec rule checks metadata itself, as
	// core/v1 Events do for compatibility with old clients.
	ownMeta bool
	// spec checks everything but metadata, on create and on update.
	spec func(obj T) field.ErrorList
	// createOnly holds the checks that upstream runs on create only, usually
	// because the field is immutable afterwards.
	createOnly func(obj T) field.ErrorList
	// change checks what an update may change (immutability, transitions).
	change func(obj, old T) field.ErrorList
	// statusChange checks an update through the status subresource.
	statusChange func(obj, old T) field.ErrorList
}

var metadataPath = field.NewPath("metadata")

func (k *kind[T]) nameFunc() apimachineryvalidation.ValidateNameFunc {
	if k.name == nil {
		return apimachineryvalidation.NameIsDNSSubdomain
	}
	return k.name
}

func (k *kind[T]) create(o runtime.Object) field.ErrorList {
	obj := o.(T)
	var errs field.ErrorList
	if !k.ownMeta {
		errs = apimachineryvalidation.ValidateObjectMetaAccessor(obj, !k.cluster, k.nameFunc(), metadataPath)
	}
	if k.spec != nil {
		errs = append(errs, k.spec(obj)...)
	}
	if k.createOnly != nil {
		errs = append(errs, k.createOnly(obj)...)
	}
	return errs
}

func (k *kind[T]) update(o, p runtime.Object) field.ErrorList {
	obj, old := o.(T), p.(T)
	var errs field.ErrorList
	if !k.ownMeta {
		errs = apimachineryvalidation.ValidateObjectMetaAccessorUpdate(obj, old, metadataPath)
	}
	if k.spec != nil {
		errs = append(errs, k.spec(obj)...)
	}
	if k.change != nil {
		errs = append(errs, k.change(obj, old)...)
	}
	return errs
}

func (k *kind[T]) status(o, p runtime.Object) field.ErrorList {
	obj, old := o.(T), p.(T)
	errs := apimachineryvalidation.ValidateObjectMetaAccessorUpdate(obj, old, metadataPath)
	if k.statusChange != nil {
		errs = append(errs, k.statusChange(obj, old)...)
	}
	return errs
}

// kinds maps the Go type of each served hub object to its rules.
var kinds = map[reflect.Type]kindRules{}

// register adds the rules of the kind whose hub type is T. Each group's file
// registers its kinds from init, so adding a group is adding a file.
func register[T object](k *kind[T]) {
	t := reflect.TypeFor[T]()
	if _, dup := kinds[t]; dup {
		panic("validation: kind registered twice: " + t.String())
	}
	kinds[t] = k
}
