// Package proxier ties trireme-proxy together: informers on Services,
// EndpointSlices and the proxy's own Node feed the model's Tracker; a
// sync loop batches changes (--min-sync-period), hands them to a back
// end, resyncs everything periodically and after failures, clears stale
// conntrack entries, and keeps health and metrics.
package proxier
