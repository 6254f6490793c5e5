// Package registry builds the etcd-backed REST storage of every served
// resource: one descriptor per resource in resources.go, the shared
// create/update/delete strategy, status and scale subresources, and hooks
// for the resources whose behaviour differs (pods, services, namespaces).
package registry
