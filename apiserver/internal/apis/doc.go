// Package apis lists every served resource and installs them, grouped by
// API group, into the generic API server.
package apis
