// Package backend is the contract between trireme-proxy's sync loop and
// the packages that turn the model into kernel rules (nftables,
// iptables).
package backend

import (
	"context"
	"maps"
	"net/netip"
	"slices"

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

// Render renders the ports a sync rebuilds, every port of State on a full
// sync and the changed ones otherwise: it returns their names, sorted, and
// each one's piece, the zero P for a port that is gone.
func Render[P any](req Request, full bool, render func(*model.ServicePort) P) ([]model.ServicePortName, map[model.ServicePortName]P) {
	var names []model.ServicePortName
	if full {
		names = slices.SortedFunc(maps.Keys(req.State), model.Compare)
	} else {
		names = slices.SortedFunc(maps.Keys(req.Changed), model.Compare)
	}
	pieces := make(map[model.ServicePortName]P, len(names))
	for _, n := range names {
		var pc P
		if sp, ok := req.State[n]; ok {
			pc = render(sp)
		}
		pieces[n] = pc
	}
	return names, pieces
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
