// Package services holds what is special about Services: ClusterIP and
// NodePort allocation on create, update and delete, and the values a client
// may leave out on update being carried over from the stored object.
package services
