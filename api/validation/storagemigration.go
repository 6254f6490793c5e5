package validation

import (
	"strconv"
	"strings"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func init() {
	register(&kind[*storagemigrationv1.StorageVersionMigration]{
		cluster: true,
		spec:    storageVersionMigrationRules,
		change: func(m, old *storagemigrationv1.StorageVersionMigration) field.ErrorList {
			return immutable(m.Spec, old.Spec, specPath)
		},
		statusChange: storageVersionMigrationStatusChange,
	})
}

// storageVersionMigrationRules checks the resource to migrate is named as
// an APIService's would be.
func storageVersionMigrationRules(m *storagemigrationv1.StorageVersionMigration) field.ErrorList {
	var errs field.ErrorList
	p := specPath.Child("resource")
	r := m.Spec.Resource
	if r.Resource == "" {
		errs = append(errs, field.Required(p.Child("resource"), "resource is required to be set"))
	} else if msgs := utilvalidation.IsDNS1035Label(r.Resource); len(msgs) > 0 {
		errs = append(errs, field.Invalid(p.Child("resource"), r.Resource, strings.Join(msgs, ",")))
	}
	if r.Group != "" {
		if msgs := utilvalidation.IsDNS1123Subdomain(r.Group); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("group"), r.Group, strings.Join(msgs, ",")))
		}
	}
	return errs
}

// storageVersionMigrationStatusChange checks a migration's progress: the
// resource version it started from is a number set once, and an outcome,
// once reached, stays.
func storageVersionMigrationStatusChange(m, old *storagemigrationv1.StorageVersionMigration) field.ErrorList {
	p := field.NewPath("status")
	st := &m.Status
	errs := metav1validation.ValidateConditions(st.Conditions, p.Child("conditions"))
	if rv := st.ResourceVersion; rv != "" {
		if _, err := strconv.ParseUint(rv, 10, 64); err != nil {
			errs = append(errs, field.Invalid(p.Child("resourceVersion"), rv, "must be a resource version"))
		}
	}
	if old.Status.ResourceVersion != "" && old.Status.ResourceVersion != st.ResourceVersion {
		errs = append(errs, field.Invalid(p.Child("resourceVersion"), st.ResourceVersion, "field is immutable"))
	}
	succeeded := string(storagemigrationv1.MigrationSucceeded)
	failed := string(storagemigrationv1.MigrationFailed)
	if apimeta.IsStatusConditionTrue(st.Conditions, succeeded) && apimeta.IsStatusConditionTrue(st.Conditions, failed) {
		errs = append(errs, field.Invalid(p.Child("conditions"), st.Conditions, "Both success and failed conditions cannot be true at the same time"))
	}
	for _, c := range []struct{ typ, name string }{{succeeded, "Success"}, {failed, "Failed"}} {
		if apimeta.IsStatusConditionTrue(old.Status.Conditions, c.typ) && !apimeta.IsStatusConditionTrue(st.Conditions, c.typ) {
			errs = append(errs, field.Invalid(p.Child("conditions"), st.Conditions, c.name+" condition cannot be set to false once it is true"))
		}
	}
	return errs
}
