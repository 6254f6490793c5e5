package validation

import (
	"fmt"
	"reflect"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateCreate validates a new object of any served kind (the hub type).
// Objects are expected to be defaulted already, as upstream validates after
// defaulting. Unknown types yield no errors.
func ValidateCreate(obj runtime.Object) field.ErrorList {
	k := lookup(obj)
	if k == nil {
		return nil
	}
	return k.create(obj)
}

// ValidateUpdate validates an update of old into obj: every check of
// ValidateCreate on obj except the create-only ones, metadata update rules and
// the kind's immutability rules.
func ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	k := lookup(obj)
	if k == nil {
		return nil
	}
	if errs := sameType(obj, old); errs != nil {
		return errs
	}
	return k.update(obj, old)
}

// ValidateStatusUpdate validates an update through the status subresource:
// metadata update rules and the kind's status rules. Spec changes are not
// checked here because the status strategy discards them.
func ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	k := lookup(obj)
	if k == nil {
		return nil
	}
	if errs := sameType(obj, old); errs != nil {
		return errs
	}
	return k.status(obj, old)
}

// NameFunc returns the rule names (and generateName prefixes) of obj's kind
// must follow. Kinds without a rule of their own, and unknown types, get
// DNS-1123 subdomain names, the most common upstream rule.
func NameFunc(obj runtime.Object) apimachineryvalidation.ValidateNameFunc {
	if k := lookup(obj); k != nil {
		return k.nameFunc()
	}
	return apimachineryvalidation.NameIsDNSSubdomain
}

// sameType reports an internal error when an update pairs two different
// kinds, which only a programming error in the caller can produce.
func sameType(obj, old runtime.Object) field.ErrorList {
	if old == nil || reflect.TypeOf(obj) != reflect.TypeOf(old) || isNilPointer(old) {
		return field.ErrorList{field.InternalError(nil, fmt.Errorf("cannot validate update of %T with old object %T", obj, old))}
	}
	return nil
}

// lookup returns the rules of obj's Go type, or nil for unknown types and
// nil pointers.
func lookup(obj runtime.Object) kindRules {
	if obj == nil || isNilPointer(obj) {
		return nil
	}
	return kinds[reflect.TypeOf(obj)]
}

func isNilPointer(obj runtime.Object) bool {
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
