// Package validation checks served objects the way kube-apiserver does,
// returning field.ErrorLists whose paths point at the offending field.
//
// ValidateCreate, ValidateUpdate and ValidateStatusUpdate dispatch on the Go
// type of the hub object (the k8s.io/api versioned type, or events.Event).
// Each group's file registers its kinds from init with register; adding a
// group (rbac, admissionregistration, certificates) is adding one file.
// Objects are expected to be defaulted, as upstream validates after
// defaulting; unknown types validate without errors.
package validation
