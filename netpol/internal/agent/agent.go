// Package agent keeps a node's NetworkPolicy table in step with the
// cluster: informers on pods, namespaces and NetworkPolicies mark it dirty,
// and a sync at most every MinSyncPeriod resolves every policy and writes
// the whole table in one transaction.
package agent

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	networkinglisters "k8s.io/client-go/listers/networking/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	cnpinformers "sigs.k8s.io/network-policy-api/pkg/client/informers/externalversions"
	cnplisters "sigs.k8s.io/network-policy-api/pkg/client/listers/apis/v1beta1"

	"trireme.dev/netpol/internal/policy"
	"trireme.dev/netpol/internal/ruleset"
)

// Table is what the agent writes to: the nftables table.
type Table interface {
	Sync(ctx context.Context, want *ruleset.Objects) (int, error)
	Check(ctx context.Context, want *ruleset.Objects) error
	// Reset makes the next Sync rewrite the whole table.
	Reset()
}

// Config is what an Agent is built from.
type Config struct {
	NodeName string
	Client   kubernetes.Interface
	Table    Table
	// MinSyncPeriod is the least time between two syncs; 0 means 100ms.
	MinSyncPeriod time.Duration
	// SyncPeriod rewrites the table even without a change, repairing what
	// something else did to it; 0 means a minute.
	SyncPeriod time.Duration
	// Recorder records Events on policies the kernel refuses; nil records
	// none.
	Recorder events.EventRecorder
	Metrics  *Metrics
	// LogGroup, when not 0, is the NFLOG group denied packets are logged
	// to; LogDenied then receives them.
	LogGroup uint16
	// Cut deletes the established connections the policies in force no
	// longer allow, after each sync that changed the table; nil cuts none.
	Cut func(*policy.Resolved) (uint, error)
	Log logr.Logger
}

// Agent is one node's enforcer.
type Agent struct {
	cfg        Config
	pods       corelisters.PodLister
	namespaces corelisters.NamespaceLister
	policies   networkinglisters.NetworkPolicyLister
	nodes      corelisters.NodeLister
	dirty      chan struct{}

	mu       sync.Mutex
	synced   bool
	lastSync time.Time
	// problems already logged, so that each is said once.
	problems map[string]bool
	// resolved is what the table in force was written from.
	resolved *policy.Resolved
	// written is the fingerprint of the table last written.
	written [sha256.Size]byte
	// clusterPolicies lists ClusterNetworkPolicies once their CRD is
	// served; nil before.
	clusterPolicies cnplisters.ClusterNetworkPolicyLister
}

// clusterGroupVersion is where ClusterNetworkPolicies are served.
const clusterGroupVersion = "policy.networking.k8s.io/v1beta1"

// WatchClusterPolicies adds ClusterNetworkPolicies to what the agent
// enforces once the API serves them (their CRD, which the addons chart
// installs), looking every checkPeriod until it does: an agent on a
// cluster without the CRD enforces NetworkPolicies alone.
func (a *Agent) WatchClusterPolicies(ctx context.Context, disco discovery.DiscoveryInterface, factory cnpinformers.SharedInformerFactory, checkPeriod time.Duration) {
	for !served(disco) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(checkPeriod):
		}
	}
	inf := factory.Policy().V1beta1().ClusterNetworkPolicies()
	_, _ = inf.Informer().AddEventHandler(a.dirtyOnChange())
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
		return
	}
	a.mu.Lock()
	a.clusterPolicies = inf.Lister()
	a.mu.Unlock()
	a.cfg.Log.Info("Enforcing ClusterNetworkPolicies", "groupVersion", clusterGroupVersion)
	a.markDirty()
}

func served(disco discovery.DiscoveryInterface) bool {
	list, err := disco.ServerResourcesForGroupVersion(clusterGroupVersion)
	if err != nil {
		return false
	}
	for _, r := range list.APIResources {
		if r.Name == "clusternetworkpolicies" {
			return true
		}
	}
	return false
}

// New builds an agent and registers its informers on factory, and that of
// its own Node on nodeFactory (one that lists that Node alone).
func New(cfg Config, factory, nodeFactory informers.SharedInformerFactory) *Agent {
	if cfg.MinSyncPeriod == 0 {
		cfg.MinSyncPeriod = 100 * time.Millisecond
	}
	if cfg.SyncPeriod == 0 {
		cfg.SyncPeriod = time.Minute
	}
	a := &Agent{
		cfg:        cfg,
		pods:       factory.Core().V1().Pods().Lister(),
		namespaces: factory.Core().V1().Namespaces().Lister(),
		policies:   factory.Networking().V1().NetworkPolicies().Lister(),
		nodes:      nodeFactory.Core().V1().Nodes().Lister(),
		dirty:      make(chan struct{}, 1),
		problems:   map[string]bool{},
	}
	h := a.dirtyOnChange()
	for _, inf := range []cache.SharedIndexInformer{
		factory.Core().V1().Pods().Informer(), factory.Core().V1().Namespaces().Informer(), factory.Networking().V1().NetworkPolicies().Informer(),
		nodeFactory.Core().V1().Nodes().Informer(),
	} {
		_, _ = inf.AddEventHandler(h)
	}
	return a
}

// dirtyOnChange is the informers' handler: any change marks the table dirty.
func (a *Agent) dirtyOnChange() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { a.markDirty() },
		UpdateFunc: func(any, any) { a.markDirty() },
		DeleteFunc: func(any) { a.markDirty() },
	}
}

func (a *Agent) markDirty() {
	select {
	case a.dirty <- struct{}{}:
	default:
	}
}

// Run syncs until ctx ends. The informers must have synced. A change is
// written at once when the last sync is at least MinSyncPeriod old, else
// when it gets that old, together with whatever else changed meanwhile;
// every SyncPeriod the table is rewritten whole.
func (a *Agent) Run(ctx context.Context) {
	resync := time.NewTicker(a.cfg.SyncPeriod)
	defer resync.Stop()
	backoff := time.Duration(0)
	for {
		started := time.Now()
		if err := a.Sync(ctx); err != nil {
			backoff = min(max(2*backoff, time.Second), 30*time.Second)
			a.cfg.Log.Error(err, "Sync failed; the rules in force stay", "retryIn", backoff)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			continue
		}
		backoff = 0
		select {
		case <-ctx.Done():
			return
		case <-a.dirty:
		case <-resync.C:
			a.cfg.Table.Reset()
		}
		if wait := a.cfg.MinSyncPeriod - time.Since(started); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
	}
}

// Sync resolves every policy and writes the table.
func (a *Agent) Sync(ctx context.Context) error {
	start := time.Now()
	state, err := a.state()
	if err != nil {
		return err
	}
	res := policy.Resolve(state)
	a.logProblems(res.Problems)
	want := ruleset.RenderLogged(res, a.cfg.LogGroup)
	ops, err := a.cfg.Table.Sync(ctx, want)
	a.cfg.Metrics.observeSync(time.Since(start), err, res, want)
	if err != nil {
		a.blame(ctx, state)
		return err
	}
	a.mu.Lock()
	a.synced, a.lastSync, a.resolved = true, time.Now(), res
	a.mu.Unlock()
	a.cfg.Log.V(2).Info("Synced", "took", time.Since(start), "policedPods", len(res.Pods), "operations", ops)
	if fp := want.Fingerprint(); fp != a.written && a.cfg.Cut != nil {
		a.written = fp
		n, err := a.cfg.Cut(res)
		a.cfg.Metrics.observeCut(n)
		if err != nil {
			// The rules are in force; a connection left open is retried at
			// the next change.
			a.written = [sha256.Size]byte{}
			a.cfg.Log.Error(err, "Cannot cut the connections the policies no longer allow")
		} else if n > 0 {
			a.cfg.Log.Info("Cut connections the policies no longer allow", "connections", n)
		}
	}
	return nil
}

// Disarm is the agent's last write, when it stops: the policies stay in
// force (it is most often restarted in a moment), but pods it does not
// know are no longer held back, since nothing will make them known until
// it is back (or ever, when the addon was removed).
func (a *Agent) Disarm(ctx context.Context) error {
	s, err := a.state()
	if err != nil {
		return err
	}
	s.PodCIDRs = nil
	_, err = a.cfg.Table.Sync(ctx, ruleset.RenderLogged(policy.Resolve(s), a.cfg.LogGroup))
	return err
}

// Healthy says whether the last sync succeeded recently enough: twice the
// sync period after it, a stuck agent fails /healthz.
func (a *Agent) Healthy() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.synced {
		return fmt.Errorf("no successful sync yet")
	}
	if age := time.Since(a.lastSync); age > 2*a.cfg.SyncPeriod+a.cfg.MinSyncPeriod {
		return fmt.Errorf("last successful sync %s ago", age.Round(time.Second))
	}
	return nil
}

func (a *Agent) logProblems(problems []string) {
	for _, p := range problems {
		if !a.problems[p] {
			a.problems[p] = true
			a.cfg.Log.Info("Part of a policy matches nothing", "problem", p)
		}
	}
}

// blame finds, after the kernel refused the table, the policies whose
// rules it refuses on their own, and records a Warning Event on each.
func (a *Agent) blame(ctx context.Context, s *policy.State) {
	if a.cfg.Recorder == nil {
		return
	}
	for _, p := range s.Policies {
		alone := *s
		alone.Policies = []*networkingv1.NetworkPolicy{p}
		if err := a.cfg.Table.Check(ctx, ruleset.Render(policy.Resolve(&alone))); err != nil {
			a.cfg.Recorder.Eventf(p, nil, corev1.EventTypeWarning, "RulesRefused", "Enforce", "The kernel refused this policy's nftables rules; the previous rules stay in force: %v", err)
		}
	}
}

// state reads the informers' caches into what policies resolve against.
func (a *Agent) state() (*policy.State, error) {
	pods, err := a.pods.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	nss, err := a.namespaces.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	nps, err := a.policies.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list network policies: %w", err)
	}
	s := &policy.State{Node: a.cfg.NodeName, Namespaces: make(map[string]map[string]string, len(nss)), Policies: nps}
	a.mu.Lock()
	cnps := a.clusterPolicies
	a.mu.Unlock()
	if cnps != nil {
		if s.ClusterPolicies, err = cnps.List(labels.Everything()); err != nil {
			return nil, fmt.Errorf("list cluster network policies: %w", err)
		}
	}
	if node, err := a.nodes.Get(a.cfg.NodeName); err == nil {
		cidrs := node.Spec.PodCIDRs
		if len(cidrs) == 0 && node.Spec.PodCIDR != "" {
			cidrs = []string{node.Spec.PodCIDR}
		}
		for _, c := range cidrs {
			if p, err := netip.ParsePrefix(c); err == nil && p.Addr().Is4() {
				s.PodCIDRs = append(s.PodCIDRs, p.Masked())
			}
		}
	}
	for _, ns := range nss {
		s.Namespaces[ns.Name] = ns.Labels
	}
	for _, p := range pods {
		if pp := convertPod(p); pp != nil {
			s.Pods = append(s.Pods, pp)
		}
	}
	return s, nil
}

// convertPod is what policies read of a pod; nil for a pod that has
// finished (its address may already be another pod's).
func convertPod(p *corev1.Pod) *policy.Pod {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return nil
	}
	out := &policy.Pod{Namespace: p.Namespace, Name: p.Name, Labels: p.Labels, Node: p.Spec.NodeName, HostNetwork: p.Spec.HostNetwork}
	for _, ip := range p.Status.PodIPs {
		if a, err := netip.ParseAddr(ip.IP); err == nil && a.Is4() {
			out.IPs = append(out.IPs, a)
		}
	}
	if len(out.IPs) == 0 && p.Status.PodIP != "" {
		if a, err := netip.ParseAddr(p.Status.PodIP); err == nil && a.Is4() {
			out.IPs = append(out.IPs, a)
		}
	}
	for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
		for _, port := range c.Ports {
			if port.Name == "" {
				continue
			}
			proto := port.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			out.Ports = append(out.Ports, policy.NamedPort{Name: port.Name, Protocol: proto, Port: port.ContainerPort})
		}
	}
	return out
}
