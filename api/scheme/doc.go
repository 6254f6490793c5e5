// Package scheme builds the runtime.Scheme every Trireme API server and client
// shares: the served groups, their defaulting, field-label conversions and the
// Events hub.
package scheme
