// Package pods holds what is special about pods: their create-time status,
// graceful deletion, and the binding, eviction, ephemeralcontainers and
// resize subresources. Proxying lives in package proxy.
package pods
