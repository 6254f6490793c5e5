// Package services holds what is special about Services: ClusterIP (one per
// IP family on a dual-stack cluster) and NodePort allocation on create,
// update and delete, ipFamilyPolicy and ipFamilies defaulting against the
// cluster's service ranges, and the values a client may leave out on update
// being carried over from the stored object.
package services
