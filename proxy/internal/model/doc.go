// Package model is trireme-proxy's view of the cluster's Services: one
// ServicePort per Service port of the proxied IP family, each with the
// endpoints that back it, and the Tracker that keeps it up to date from
// Service and EndpointSlice events, accumulating what changed between
// syncs so that back ends rewrite only that.
package model
