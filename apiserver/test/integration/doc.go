// Package integration drives an in-process trireme-apiserver with client-go
// (typed, dynamic and raw REST clients, JSON and protobuf) and checks that
// it answers as a kube-apiserver does. The tests are in *_test.go files; one
// server, started in TestMain, serves the whole package.
package integration
