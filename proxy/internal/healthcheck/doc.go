// Package healthcheck serves the proxy's own /healthz (port 10256), which
// fails when changes wait longer than allowed for a successful sync, and
// the per-Service healthCheckNodePort servers of externalTrafficPolicy
// Local Services, which tell load balancers whether this node has a local
// endpoint.
package healthcheck
