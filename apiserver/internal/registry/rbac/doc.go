// Package rbac serves rbac.authorization.k8s.io/v1 and guards it against
// privilege escalation as upstream does: a user may write a Role or
// ClusterRole only with rules they already hold (or with the escalate verb
// on it), and a binding only to a role whose rules they hold (or with the
// bind verb on it). Members of system:masters are exempt.
package rbac
