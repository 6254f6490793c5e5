package model

import (
	"net/netip"
	"sync"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/types"
)

// NamespacedNameOf names a Service.
func NamespacedNameOf(svc *v1.Service) types.NamespacedName {
	return types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
}

// ServiceOfSlice names the Service an EndpointSlice belongs to, or ok
// false when it has no kubernetes.io/service-name label.
func ServiceOfSlice(es *discovery.EndpointSlice) (types.NamespacedName, bool) {
	name := es.Labels[discovery.LabelServiceName]
	if name == "" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: es.Namespace, Name: name}, true
}

// Source gives the current Service and EndpointSlices of one name, as the
// informers' caches hold them; svc is nil when the Service is gone.
type Source interface {
	Get(name types.NamespacedName) (svc *v1.Service, slices []*discovery.EndpointSlice)
}

// Tracker accumulates the names of Services that changed since the last
// sync, and on Apply rebuilds exactly those in the State. It is safe for
// the informers' handlers to call Mark while a sync runs.
type Tracker struct {
	nodeName string
	family   Family

	mu    sync.Mutex
	dirty map[types.NamespacedName]struct{}
	all   bool

	state State
	bySvc map[types.NamespacedName][]ServicePortName
}

// NewTracker tracks the Services of family f for node nodeName.
func NewTracker(nodeName string, f Family) *Tracker {
	return &Tracker{
		nodeName: nodeName,
		family:   f,
		dirty:    map[types.NamespacedName]struct{}{},
		state:    State{},
		bySvc:    map[types.NamespacedName][]ServicePortName{},
	}
}

// Mark records that the Service name, or its endpoints, changed.
func (t *Tracker) Mark(name types.NamespacedName) {
	t.mu.Lock()
	t.dirty[name] = struct{}{}
	t.mu.Unlock()
}

// MarkAll records that every Service must be rebuilt, as when the node's
// own object changes which endpoints are local.
func (t *Tracker) MarkAll() {
	t.mu.Lock()
	t.all = true
	t.mu.Unlock()
}

// Pending reports whether anything was marked since the last Apply.
func (t *Tracker) Pending() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.all || len(t.dirty) > 0
}

// Changes is what one Apply found.
type Changes struct {
	// Ports are the ServicePorts whose rules changed: added, removed or
	// different.
	Ports map[ServicePortName]struct{}
	// Skips are the objects, or parts, left out of the model.
	Skips []Skip
	// Stale are conntrack flows to clear. UDP has no connection end, so a
	// flow keeps going to a removed endpoint, or keeps being refused after
	// a service got endpoints, until it is deleted. A TCP entry outlives
	// its endpoint too: one left closing (FIN_WAIT, LAST_ACK) when the pod
	// died passes a new SYN from a reused client port on to the dead
	// address, where it goes unanswered.
	Stale []StaleFlow
}

// StaleFlow describes conntrack entries of Protocol to delete: those to
// ServiceIP:Port (or to any local address on NodePort, when NodePort is
// not 0; ServiceIP then only gives the family) that were DNATed to
// Endpoint, or, when Endpoint is invalid, all of them.
type StaleFlow struct {
	Protocol  v1.Protocol
	ServiceIP netip.Addr
	Port      int32
	NodePort  int32
	Endpoint  netip.Addr
}

// staleFlows returns the flows to clear when a UDP ServicePort goes from old
// to cur (either nil when it appears or goes away). A port that appears
// with endpoints is treated as one that had none: flows sent to its address
// before (a client with a fixed source port, refused or unanswered) would
// otherwise keep missing the new rules, as upstream clears them too.
func staleFlows(old, cur *ServicePort) []StaleFlow {
	if old != nil && old.Protocol == v1.ProtocolTCP {
		return goneFlows(old, cur)
	}
	if old == nil && cur != nil && cur.Protocol == v1.ProtocolUDP && len(cur.AllEndpoints()) > 0 {
		old = &ServicePort{Protocol: v1.ProtocolUDP, ClusterIP: cur.ClusterIP, ExternalIPs: cur.ExternalIPs,
			LoadBalancerIPs: cur.LoadBalancerIPs, Port: cur.Port, NodePort: cur.NodePort}
	}
	if old == nil || old.Protocol != v1.ProtocolUDP {
		return nil
	}
	var curEps map[netip.Addr]bool
	hadNone := len(old.AllEndpoints()) == 0
	if cur != nil {
		curEps = map[netip.Addr]bool{}
		for _, e := range cur.AllEndpoints() {
			curEps[e.IP] = true
		}
	}
	if hadNone && len(curEps) > 0 {
		return old.flowsTo(netip.Addr{})
	}
	var out []StaleFlow
	for _, e := range old.AllEndpoints() {
		if !curEps[e.IP] {
			out = append(out, old.flowsTo(e.IP)...)
		}
	}
	return out
}

// goneFlows returns the flows to clear when a TCP ServicePort goes from old
// to cur (nil when it goes away): those to the endpoints no longer listed at
// all. An endpoint that is only terminating stays listed while its pod
// drains, so its connections finish; once listed no more, its pod is gone
// (or no longer selected, whose connections through the Service end as
// IPVS's expire_nodest_conn ends them), and every entry to it is stale.
func goneFlows(old, cur *ServicePort) []StaleFlow {
	listed := map[netip.Addr]bool{}
	if cur != nil {
		for _, e := range cur.Endpoints {
			listed[e.IP] = true
		}
	}
	var out []StaleFlow
	for _, e := range old.Endpoints {
		if listed[e.IP] {
			continue
		}
		listed[e.IP] = true // once, whatever its ports
		out = append(out, old.flowsTo(e.IP)...)
	}
	return out
}

// flowsTo returns p's flows DNATed to ep (any endpoint when ep is invalid):
// to each of its addresses on its port, and to its node port.
func (p *ServicePort) flowsTo(ep netip.Addr) []StaleFlow {
	var out []StaleFlow
	for _, ip := range append(append([]netip.Addr{p.ClusterIP}, p.ExternalIPs...), p.LoadBalancerIPs...) {
		out = append(out, StaleFlow{Protocol: p.Protocol, ServiceIP: ip, Port: p.Port, Endpoint: ep})
	}
	if p.NodePort != 0 {
		out = append(out, StaleFlow{Protocol: p.Protocol, NodePort: p.NodePort, ServiceIP: p.ClusterIP, Endpoint: ep})
	}
	return out
}

// Apply rebuilds the marked Services from src (every name all returns,
// when MarkAll was called) and returns the State and what changed. The State
// belongs to the Tracker: callers read it until the next Apply.
func (t *Tracker) Apply(src Source, all func() []types.NamespacedName) (State, Changes) {
	t.mu.Lock()
	dirty := t.dirty
	if t.all {
		dirty = map[types.NamespacedName]struct{}{}
		for n := range t.bySvc {
			dirty[n] = struct{}{}
		}
		if all != nil {
			for _, n := range all() {
				dirty[n] = struct{}{}
			}
		}
	}
	t.dirty, t.all = map[types.NamespacedName]struct{}{}, false
	t.mu.Unlock()

	ch := Changes{Ports: map[ServicePortName]struct{}{}}
	for name := range dirty {
		svc, eps := src.Get(name)
		var ports []*ServicePort
		if svc != nil {
			var s []Skip
			ports, s = Build(svc, eps, t.nodeName, t.family)
			ch.Skips = append(ch.Skips, s...)
		}
		seen := map[ServicePortName]struct{}{}
		names := make([]ServicePortName, 0, len(ports))
		for _, p := range ports {
			seen[p.Name] = struct{}{}
			names = append(names, p.Name)
			if old := t.state[p.Name]; !p.Equal(old) {
				ch.Ports[p.Name] = struct{}{}
				ch.Stale = append(ch.Stale, staleFlows(old, p)...)
			}
			t.state[p.Name] = p
		}
		for _, old := range t.bySvc[name] {
			if _, ok := seen[old]; !ok {
				ch.Stale = append(ch.Stale, staleFlows(t.state[old], nil)...)
				delete(t.state, old)
				ch.Ports[old] = struct{}{}
			}
		}
		if len(names) == 0 {
			delete(t.bySvc, name)
		} else {
			t.bySvc[name] = names
		}
	}
	return t.state, ch
}
