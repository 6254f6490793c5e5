// Package authorization serves authorization.k8s.io/v1: the create-only
// review kinds that ask the server's authorizer a question and answer in
// the object's status (kubectl auth can-i, delegated authorization).
package authorization
