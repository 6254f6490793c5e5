// Package bootstrappolicy holds the default RBAC policy the apiserver keeps
// in place at every start: the user-facing roles (cluster-admin, admin,
// edit, view and their aggregated parts), the roles of the control-plane
// components and of each controller of the controller-manager, and the
// bindings upstream Kubernetes creates for them. It is data only; the
// reconcile that writes it lives in package authz.
package bootstrappolicy
