// Package events holds the hub type that core/v1 and events.k8s.io/v1 Events
// convert through, because both API groups share the /registry/events store.
package events
