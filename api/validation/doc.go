// Package validation checks served objects the way upstream does, returning
// field.ErrorLists whose paths point at the offending field.
package validation
