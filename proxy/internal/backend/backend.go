// Package backend is the contract between trireme-proxy's sync loop and
// the packages that turn the model into kernel rules (nftables,
// iptables).
package backend

import (
	"context"
	"net/netip"

	"trireme.dev/proxy/internal/model"
)

// Request is one sync's input.
type Request struct {
	// State is every ServicePort to proxy.
	State model.State
	// Changed names the ports whose rules may differ from the last
	// successful sync; a partial sync rewrites only those.
	Changed map[model.ServicePortName]struct{}
	// Full asks for every rule to be rewritten and anything of ours not in
	// State removed, as after start-up, a failed sync, or periodically.
	Full bool
	// NodePortIPs are the addresses NodePorts answer on; nil means every
	// local address but loopback.
	NodePortIPs []netip.Addr
}

// Result says what a sync wrote.
type Result struct {
	// Rules counts the rules and map or set elements written.
	Rules int
	// Total counts the rules and elements the back end now holds.
	Total int
}

// Interface is a back end. Sync either applies the whole Request
// atomically and returns nil, or changes nothing it remembers and returns
// an error; after an error the caller's next Request must be Full.
// Cleanup removes everything the back end (in any earlier process)
// installed; it is not an error if there is nothing.
type Interface interface {
	Sync(ctx context.Context, req Request) (Result, error)
	Cleanup(ctx context.Context) error
}
