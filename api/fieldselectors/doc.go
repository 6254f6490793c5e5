// Package fieldselectors defines the fields each served kind can be selected
// by (metadata.name and metadata.namespace everywhere, plus upstream's
// per-kind fields) and registers them as field-label conversions.
package fieldselectors
