// Package satoken signs and verifies service-account tokens: JWTs whose
// subject is system:serviceaccount:<namespace>:<name>, optionally bound to a
// Pod, Secret or Node so that deleting that object revokes the token. There
// are no legacy (Secret-stored, non-expiring) tokens: every token has an
// audience and an expiry.
package satoken
