package lbannounce

import (
	"net/netip"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// ExcludeLabel keeps a node from announcing any address, as upstream's
// service controller keeps it out of load balancers.
const ExcludeLabel = "node.kubernetes.io/exclude-from-external-load-balancers"

// LeaseName is the name of node's Lease: prefix, a dash, the node's name.
func LeaseName(prefix, node string) string { return prefix + "-" + node }

// leaseExpiry is when lease stops being live, and false when it names no
// holder (released) or no renewal.
func leaseExpiry(l *coordinationv1.Lease) (time.Time, bool) {
	s := l.Spec
	if s.HolderIdentity == nil || *s.HolderIdentity == "" || s.RenewTime == nil || s.LeaseDurationSeconds == nil {
		return time.Time{}, false
	}
	return s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second), true
}

// Nodes is what eligibility needs of nodes at now: each node's Lease is
// prefix-<name>, live while it has a holder (one announcer of the node's:
// two run there during a rolling update) whose last renewal is within the
// Lease's duration. It also returns the earliest time after now at which
// a live Lease expires (zero if none), when the answer changes unless the
// Lease is renewed.
func Nodes(nodes []*corev1.Node, leases []*coordinationv1.Lease, prefix string, now time.Time) ([]Node, time.Time) {
	byName := make(map[string]*coordinationv1.Lease, len(leases))
	for _, l := range leases {
		byName[l.Name] = l
	}
	var next time.Time
	out := make([]Node, 0, len(nodes))
	for _, n := range nodes {
		_, excluded := n.Labels[ExcludeLabel]
		nd := Node{Name: n.Name, Ready: ready(n), Excluded: excluded}
		if l := byName[LeaseName(prefix, n.Name)]; l != nil {
			if until, ok := leaseExpiry(l); ok && until.After(now) {
				nd.LeaseLive = true
				if next.IsZero() || until.Before(next) {
					next = until
				}
			}
		}
		out = append(out, nd)
	}
	return out, next
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Announced reports whether the addresses in s's status are this
// announcer's to announce: a LoadBalancer Service of no class (the class
// trireme-cloud-controller-manager serves).
func Announced(s *corev1.Service) bool {
	return s.Spec.Type == corev1.ServiceTypeLoadBalancer && s.Spec.LoadBalancerClass == nil
}

// Addresses returns every announced address with the Services that share
// it; slices are the cluster's EndpointSlices, read for the Services with
// externalTrafficPolicy: Local.
func Addresses(services []*corev1.Service, slices []*discoveryv1.EndpointSlice) map[netip.Addr][]Service {
	out := map[netip.Addr][]Service{}
	var local map[string][]string // namespace/name: nodes with a ready endpoint
	for _, s := range services {
		if !Announced(s) {
			continue
		}
		svc := Service{Key: s.Namespace + "/" + s.Name, Local: s.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal}
		if svc.Local {
			if local == nil {
				local = readyNodes(slices)
			}
			svc.LocalNodes = local[svc.Key]
		}
		for _, in := range s.Status.LoadBalancer.Ingress {
			if in.IPMode != nil && *in.IPMode != corev1.LoadBalancerIPModeVIP {
				continue // the load balancer proxies: nothing to announce
			}
			ip, err := netip.ParseAddr(in.IP)
			if err != nil {
				continue
			}
			out[ip.Unmap()] = append(out[ip.Unmap()], svc)
		}
	}
	return out
}

// readyNodes maps each Service (namespace/name) to the nodes of its ready
// endpoints.
func readyNodes(slices []*discoveryv1.EndpointSlice) map[string][]string {
	out := map[string][]string{}
	for _, es := range slices {
		name := es.Labels[discoveryv1.LabelServiceName]
		if name == "" {
			continue
		}
		key := es.Namespace + "/" + name
		for _, ep := range es.Endpoints {
			if ep.NodeName == nil || (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) {
				continue
			}
			out[key] = append(out[key], *ep.NodeName)
		}
	}
	return out
}
