package model

import (
	"cmp"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ServicePortName names one port of one Service.
type ServicePortName struct {
	types.NamespacedName
	// Port is the port's name, "" for a Service's only unnamed port.
	Port     string
	Protocol v1.Protocol
}

// String reads "namespace/name:port/protocol", as log lines and rule
// comments show it.
func (n ServicePortName) String() string {
	return fmt.Sprintf("%s/%s:%s/%s", n.Namespace, n.Name, n.Port, strings.ToLower(string(n.Protocol)))
}

// Endpoint is one address and port backing a ServicePort.
type Endpoint struct {
	IP   netip.Addr
	Port int32
	// Ready, Serving and Terminating are the EndpointSlice conditions, with
	// their documented defaults applied.
	Ready, Serving, Terminating bool
	// Local is true when the endpoint is on this proxy's node, Remote when
	// its slice names another node; neither when the slice names none (one
	// written by hand), and the pod may then be anywhere, here included.
	Local, Remote bool
}

// String reads "ip:port".
func (e Endpoint) String() string {
	return netip.AddrPortFrom(e.IP, uint16(e.Port)).String()
}

// ServicePort is one proxied port of a Service in one IP family.
type ServicePort struct {
	Name      ServicePortName
	ClusterIP netip.Addr
	Port      int32
	Protocol  v1.Protocol
	// NodePort is 0 when the Service has none.
	NodePort        int32
	ExternalIPs     []netip.Addr
	LoadBalancerIPs []netip.Addr
	// LoadBalancerSourceRanges limits the clients that may reach the
	// LoadBalancerIPs (spec.loadBalancerSourceRanges of this family);
	// empty lets any.
	LoadBalancerSourceRanges []netip.Prefix
	// AffinityTimeout is the ClientIP affinity timeout in seconds, 0 for none.
	AffinityTimeout int32
	// ExternalLocal and InternalLocal are the traffic policies Local.
	ExternalLocal, InternalLocal bool
	HealthCheckNodePort          int32
	// Endpoints are sorted by address then port, without duplicates.
	Endpoints []Endpoint
}

// usable returns the endpoints traffic may go to, out of eps: the ready
// ones, or if there are none, the serving terminating ones (as upstream
// does, so that connections drain rather than fail during a rollout).
func usable(eps []Endpoint) []Endpoint {
	var ready, terminating []Endpoint
	for _, e := range eps {
		switch {
		case e.Ready:
			ready = append(ready, e)
		case e.Serving && e.Terminating:
			terminating = append(terminating, e)
		}
	}
	if len(ready) > 0 {
		return ready
	}
	return terminating
}

func local(eps []Endpoint) []Endpoint {
	var out []Endpoint
	for _, e := range eps {
		if e.Local {
			out = append(out, e)
		}
	}
	return out
}

// AllEndpoints are the usable endpoints anywhere in the cluster.
func (s *ServicePort) AllEndpoints() []Endpoint { return usable(s.Endpoints) }

// LocalEndpoints are the usable endpoints on this node; falling back to
// terminating ones is decided among the local endpoints alone.
func (s *ServicePort) LocalEndpoints() []Endpoint { return usable(local(s.Endpoints)) }

// InternalEndpoints are where traffic to the ClusterIP goes.
func (s *ServicePort) InternalEndpoints() []Endpoint {
	if s.InternalLocal {
		return s.LocalEndpoints()
	}
	return s.AllEndpoints()
}

// ExternalEndpoints are where traffic to the NodePort, external IPs and
// load-balancer IPs goes.
func (s *ServicePort) ExternalEndpoints() []Endpoint {
	if s.ExternalLocal {
		return s.LocalEndpoints()
	}
	return s.AllEndpoints()
}

// HasExternal is true when the port is reachable other than by ClusterIP.
func (s *ServicePort) HasExternal() bool {
	return s.NodePort != 0 || len(s.ExternalIPs) > 0 || len(s.LoadBalancerIPs) > 0
}

// Equal reports whether two ServicePorts would render the same rules.
func (s *ServicePort) Equal(o *ServicePort) bool {
	if s == nil || o == nil {
		return s == o
	}
	return s.Name == o.Name && s.ClusterIP == o.ClusterIP && s.Port == o.Port && s.Protocol == o.Protocol &&
		s.NodePort == o.NodePort && slices.Equal(s.ExternalIPs, o.ExternalIPs) &&
		slices.Equal(s.LoadBalancerIPs, o.LoadBalancerIPs) && slices.Equal(s.LoadBalancerSourceRanges, o.LoadBalancerSourceRanges) &&
		s.AffinityTimeout == o.AffinityTimeout &&
		s.ExternalLocal == o.ExternalLocal && s.InternalLocal == o.InternalLocal &&
		s.HealthCheckNodePort == o.HealthCheckNodePort && slices.Equal(s.Endpoints, o.Endpoints)
}

// State is every proxied ServicePort, keyed by name.
type State map[ServicePortName]*ServicePort

// Sorted returns the state's ports in name order, so renderings are stable.
func (s State) Sorted() []*ServicePort {
	out := make([]*ServicePort, 0, len(s))
	for _, p := range s {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *ServicePort) int { return Compare(a.Name, b.Name) })
	return out
}

// Hash is a short stable digest of the name, for chain names that must be
// unique and (for iptables) at most 28 characters long.
func (n ServicePortName) Hash() string {
	return hash(n.String())
}

// EndpointHash is a digest naming endpoint e of this port.
func (n ServicePortName) EndpointHash(e Endpoint) string {
	return hash(n.String() + "|" + e.String())
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base32.StdEncoding.EncodeToString(sum[:])[:16]
}

// Compare orders names by namespace, name, port and protocol, without
// formatting them: back ends sort every name on each full sync.
func Compare(a, b ServicePortName) int {
	return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name),
		strings.Compare(a.Port, b.Port), strings.Compare(string(a.Protocol), string(b.Protocol)))
}
