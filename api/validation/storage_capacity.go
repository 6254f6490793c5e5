package validation

import (
	storagev1 "k8s.io/api/storage/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*storagev1.CSIStorageCapacity]{spec: csiStorageCapacityRules, change: csiStorageCapacityChange})
	register(&kind[*storagev1.VolumeAttributesClass]{cluster: true, spec: volumeAttributesClassRules, change: volumeAttributesClassChange})
}

// csiStorageCapacityRules: a capacity names a storage class and, when set, a
// valid node topology selector; capacities are never negative.
func csiStorageCapacityRules(c *storagev1.CSIStorageCapacity) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(c.StorageClassName, false) {
		errs = append(errs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, msg))
	}
	errs = append(errs, metav1validation.ValidateLabelSelector(c.NodeTopology, metav1validation.LabelSelectorValidationOptions{}, field.NewPath("nodeTopology"))...)
	if c.Capacity != nil && c.Capacity.Sign() < 0 {
		errs = append(errs, field.Invalid(field.NewPath("capacity"), c.Capacity.String(), "must be greater than or equal to 0"))
	}
	if c.MaximumVolumeSize != nil && c.MaximumVolumeSize.Sign() < 0 {
		errs = append(errs, field.Invalid(field.NewPath("maximumVolumeSize"), c.MaximumVolumeSize.String(), "must be greater than or equal to 0"))
	}
	return errs
}

func csiStorageCapacityChange(c, old *storagev1.CSIStorageCapacity) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(c.StorageClassName, old.StorageClassName, field.NewPath("storageClassName"))...)
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(c.NodeTopology, old.NodeTopology, field.NewPath("nodeTopology"))...)
	return errs
}

// volumeAttributesClassRules: a driver name and at least one parameter,
// both immutable, as upstream.
func volumeAttributesClassRules(c *storagev1.VolumeAttributesClass) field.ErrorList {
	var errs field.ErrorList
	if c.DriverName == "" {
		errs = append(errs, field.Required(field.NewPath("driverName"), ""))
	}
	if len(c.Parameters) == 0 {
		errs = append(errs, field.Required(field.NewPath("parameters"), "must contain at least one key/value pair"))
	}
	return errs
}

func volumeAttributesClassChange(c, old *storagev1.VolumeAttributesClass) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(c.DriverName, old.DriverName, field.NewPath("driverName"))...)
	errs = append(errs, apimachineryvalidation.ValidateImmutableField(c.Parameters, old.Parameters, field.NewPath("parameters"))...)
	return errs
}
