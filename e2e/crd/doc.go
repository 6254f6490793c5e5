// Package crd is the end-to-end suite of the API's extension points against
// the real trireme-apiserver binary and kubectl: real-world
// CustomResourceDefinitions, an operator written with controller-runtime,
// an extension apiserver reached through an APIService, and bad input.
package crd
