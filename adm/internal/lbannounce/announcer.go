package lbannounce

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	clientleaderelection "k8s.io/client-go/tools/leaderelection"
	componentbaseconfig "k8s.io/component-base/config/v1alpha1"

	"trireme.dev/adm/internal/vip"
	"trireme.dev/componentbase/leaderelection"
	"trireme.dev/componentbase/processmetrics"
)

// Config is an announcer's configuration.
type Config struct {
	// NodeName is the node this announcer runs on.
	NodeName string
	// Identity is this announcer's name in its node's Lease: unique per
	// process, since the old and the new pod of a rolling update both
	// stand for the node's Lease and only one may announce.
	Identity string
	// Interface, when set, carries every address; otherwise an address
	// goes on the interface whose network holds it, or else NodeInterface
	// (the one holding the node's IP).
	Interface, NodeInterface string
	// Lease holds the timings of every node's Lease, its namespace, and
	// in ResourceName the prefix of its name (LeaseName).
	Lease componentbaseconfig.LeaderElectionConfiguration
	// Announcements is how many gratuitous ARPs a new holder sends, a
	// second apart (then one every 30 s).
	Announcements int
}

// Clients are the announcer's connections: Lease writes time out within
// the renew deadline, while watches must not time out at all.
type Clients struct {
	Lease, Watch kubernetes.Interface
}

// Announcer announces the LoadBalancer addresses this node owns while it
// holds its node's Lease.
type Announcer struct {
	cfg     Config
	clients Clients
	net     vip.Network
	log     logr.Logger
	status  *status
	// interfaceOn finds the interface of an address's network (vip.InterfaceOn).
	interfaceOn func(net.IP) (string, bool)

	factory, leaseFactory informers.SharedInformerFactory
	trigger               chan struct{}

	mu   sync.Mutex
	held map[netip.Addr]*holding
}

// holding is an address on this node.
type holding struct {
	iface string
	// left is how many of the first, quick announcements are still to go.
	left int
}

// New returns an announcer.
func New(cfg Config, c Clients, n vip.Network, log logr.Logger) *Announcer {
	a := &Announcer{
		cfg: cfg, clients: c, net: n, log: log, status: newStatus(),
		interfaceOn:  vip.InterfaceOn,
		factory:      informers.NewSharedInformerFactory(c.Watch, 0),
		leaseFactory: informers.NewSharedInformerFactoryWithOptions(c.Watch, 0, informers.WithNamespace(cfg.Lease.ResourceNamespace)),
		trigger:      make(chan struct{}, 1),
		held:         map[netip.Addr]*holding{},
	}
	poke := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { a.poke() },
		UpdateFunc: func(any, any) { a.poke() },
		DeleteFunc: func(any) { a.poke() },
	}
	for _, inf := range []cache.SharedIndexInformer{
		a.factory.Core().V1().Nodes().Informer(),
		a.factory.Core().V1().Services().Informer(),
		a.factory.Discovery().V1().EndpointSlices().Informer(),
		a.leaseFactory.Coordination().V1().Leases().Informer(),
	} {
		_, _ = inf.AddEventHandler(poke)
	}
	return a
}

// poke asks for a sync; pokes while one is pending coalesce.
func (a *Announcer) poke() {
	select {
	case a.trigger <- struct{}{}:
	default:
	}
}

// Run watches the cluster and stands for the node's Lease until ctx ends,
// announcing while it holds it; every address is off the node when it
// returns.
func (a *Announcer) Run(ctx context.Context) error {
	a.factory.Start(ctx.Done())
	a.leaseFactory.Start(ctx.Done())
	defer a.factory.Shutdown()
	defer a.leaseFactory.Shutdown()
	for _, f := range []informers.SharedInformerFactory{a.factory, a.leaseFactory} {
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("sync the cache of %v", typ)
			}
		}
	}
	defer a.releaseAll()
	le := a.cfg.Lease
	le.ResourceName = LeaseName(le.ResourceName, a.cfg.NodeName)
	ctx = logr.NewContext(ctx, a.log)
	for ctx.Err() == nil {
		err := leaderelection.Run(ctx, leaderelection.Config{
			Lease: le, Identity: a.cfg.Identity, Client: a.clients.Lease, Watchdog: a.status.watchdog,
			Leading: func(on bool) {
				a.status.leading.Set(map[bool]float64{true: 1, false: 0}[on])
				if !on {
					a.releaseAll()
				}
			},
		}, a.work)
		// A lost Lease (the apiserver unreachable past the renew
		// deadline) is no reason to stop: stand again.
		if err != nil && !errors.Is(err, leaderelection.ErrLeadershipLost) {
			return err
		}
	}
	return nil
}

// work syncs on every change and announces until ctx ends (the Lease lost
// or the process stopping), then takes every address off.
func (a *Announcer) work(ctx context.Context) error {
	defer a.releaseAll()
	// Addresses left by an announcer of this node that was killed: none is
	// held now, so every announced address not this node's goes.
	next := a.sync(true)
	announce := time.NewTicker(time.Second)
	defer announce.Stop()
	expiry := time.NewTimer(time.Hour)
	defer expiry.Stop()
	for tick := 1; ; {
		if !next.IsZero() {
			// Just past the moment the first live Lease lapses unless
			// renewed: a dead node's addresses move then, not later.
			expiry.Reset(time.Until(next) + 50*time.Millisecond)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-a.trigger:
		case <-expiry.C:
		case <-announce.C:
			a.announce(tick%30 == 0)
			tick++
			next = time.Time{}
			continue
		}
		next = a.sync(false)
	}
}

// sync puts on this node the addresses it owns and takes off those it no
// longer owns; with clean it also takes off every other announced address.
// It returns when a Lease next lapses.
func (a *Announcer) sync(clean bool) time.Time {
	start := time.Now()
	nodeList, _ := a.factory.Core().V1().Nodes().Lister().List(labels.Everything())
	leaseList, _ := a.leaseFactory.Coordination().V1().Leases().Lister().List(labels.Everything())
	services, _ := a.factory.Core().V1().Services().Lister().List(labels.Everything())
	slices, _ := a.factory.Discovery().V1().EndpointSlices().Lister().List(labels.Everything())
	nodes, next := Nodes(nodeList, leaseList, a.cfg.Lease.ResourceName, start)
	for i := range nodes {
		if nodes[i].Name == a.cfg.NodeName {
			// This announcer holds the Lease, whatever the cache has seen yet.
			nodes[i].LeaseLive = true
		}
	}
	addresses := Addresses(services, slices)
	owners := Assign(nodes, addresses)

	a.mu.Lock()
	defer a.mu.Unlock()
	for ip := range a.held {
		if owners[ip] != a.cfg.NodeName {
			a.release(ip, "owner", owners[ip])
		}
	}
	for ip := range addresses {
		owner := owners[ip]
		switch {
		case owner == a.cfg.NodeName && a.held[ip] == nil:
			a.take(ip)
		case owner != a.cfg.NodeName && clean:
			if err := a.net.Delete(a.iface(ip), ip.AsSlice()); err != nil {
				a.status.failures.WithLabelValues("delete").Inc()
				a.log.Error(err, "Could not remove a stale address", "address", ip)
			}
		}
	}
	a.status.addresses.Set(float64(len(a.held)))
	a.status.syncs.Observe(time.Since(start).Seconds())
	a.log.V(4).Info("Synced", "addresses", len(addresses), "held", len(a.held), "took", time.Since(start))
	return next
}

// iface is where ip goes on this node.
func (a *Announcer) iface(ip netip.Addr) string {
	if a.cfg.Interface != "" {
		return a.cfg.Interface
	}
	if name, ok := a.interfaceOn(ip.AsSlice()); ok {
		return name
	}
	return a.cfg.NodeInterface
}

// take adds ip and announces it; a.mu is held.
func (a *Announcer) take(ip netip.Addr) {
	iface := a.iface(ip)
	if err := a.net.Add(iface, ip.AsSlice()); err != nil {
		// Retried at the next sync.
		a.status.failures.WithLabelValues("add").Inc()
		a.log.Error(err, "Could not add the address", "address", ip, "interface", iface)
		return
	}
	h := &holding{iface: iface, left: a.cfg.Announcements}
	a.held[ip] = h
	a.status.transitions.WithLabelValues("acquired").Inc()
	a.log.Info("Announcing", "address", ip, "interface", iface)
	a.send(ip, h)
}

// release takes ip off; a.mu is held.
func (a *Announcer) release(ip netip.Addr, why ...any) {
	h := a.held[ip]
	if err := a.net.Delete(h.iface, ip.AsSlice()); err != nil {
		// Kept as held, so the next sync tries again.
		a.status.failures.WithLabelValues("delete").Inc()
		a.log.Error(err, "Could not remove the address", "address", ip, "interface", h.iface)
		return
	}
	delete(a.held, ip)
	a.status.transitions.WithLabelValues("released").Inc()
	a.log.Info("Stopped announcing", append([]any{"address", ip, "interface", h.iface}, why...)...)
}

func (a *Announcer) releaseAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for ip := range a.held {
		a.release(ip)
	}
	a.status.addresses.Set(float64(len(a.held)))
}

// announce sends the quick announcements still due, and with all one for
// every address, so that neighbours that missed the first learn it too.
func (a *Announcer) announce(all bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for ip, h := range a.held {
		if all || h.left > 0 {
			a.send(ip, h)
		}
	}
}

func (a *Announcer) send(ip netip.Addr, h *holding) {
	if h.left > 0 {
		h.left--
	}
	if err := a.net.Announce(h.iface, ip.AsSlice()); err != nil {
		a.status.failures.WithLabelValues("announce").Inc()
		a.log.Error(err, "Could not announce the address", "address", ip, "interface", h.iface)
	}
}

// Held returns the addresses on this node.
func (a *Announcer) Held() []netip.Addr {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]netip.Addr, 0, len(a.held))
	for ip := range a.held {
		out = append(out, ip)
	}
	return out
}

// Handler serves /healthz (failing only while this announcer holds its
// Lease and cannot renew it) and /metrics.
func (a *Announcer) Handler() http.Handler {
	return vip.StatusHandler(a.status.watchdog, a.status.registry)
}

type status struct {
	registry    *prometheus.Registry
	leading     prometheus.Gauge
	addresses   prometheus.Gauge
	transitions *prometheus.CounterVec
	failures    *prometheus.CounterVec
	syncs       prometheus.Histogram
	watchdog    *clientleaderelection.HealthzAdaptor
}

func newStatus() *status {
	s := &status{
		registry: processmetrics.NewRegistry(),
		leading: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "trireme", Subsystem: "lbannounce", Name: "leading",
			Help: "1 while this announcer holds its node's Lease, else 0.",
		}),
		addresses: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "trireme", Subsystem: "lbannounce", Name: "addresses",
			Help: "LoadBalancer addresses this node announces.",
		}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "trireme", Subsystem: "lbannounce", Name: "transitions_total",
			Help: "Addresses this node took (acquired) or gave up (released).",
		}, []string{"event"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "trireme", Subsystem: "lbannounce", Name: "failures_total",
			Help: "Failed operations on addresses, by operation (add, delete, announce).",
		}, []string{"operation"}),
		syncs: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "trireme", Subsystem: "lbannounce", Name: "sync_duration_seconds",
			Help:    "Time to compute the assignment and change this node's addresses.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 8),
		}),
		watchdog: clientleaderelection.NewLeaderHealthzAdaptor(vip.WatchdogTimeout),
	}
	s.registry.MustRegister(s.leading, s.addresses, s.transitions, s.failures, s.syncs)
	return s
}
