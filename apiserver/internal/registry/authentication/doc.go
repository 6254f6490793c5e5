// Package authentication serves authentication.k8s.io/v1: TokenReview, with
// which webhooks and aggregated servers ask who a bearer token belongs to,
// and SelfSubjectReview, with which a client asks who it is
// (kubectl auth whoami). Both are create-only and never stored.
package authentication
