// Package pods holds what is special about pods: their create-time status,
// graceful deletion, and the binding, eviction, ephemeralcontainers, resize
// and proxy subresources.
package pods
