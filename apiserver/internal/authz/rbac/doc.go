// Package rbac is the RBAC authorizer: it allows a request when a Role or
// ClusterRole bound to the requester has a rule covering it. Bindings are
// found through an index by subject, so a decision costs the number of
// bindings naming the user or one of their groups, not the number of
// bindings in the cluster. It also resolves a user's rules for
// SelfSubjectRulesReview and for the escalation checks of the RBAC registry.
package rbac
