package proxier

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"runtime/debug"
	"slices"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"

	"trireme.dev/proxy/internal/backend"
	"trireme.dev/proxy/internal/conntrack"
	"trireme.dev/proxy/internal/healthcheck"
	"trireme.dev/proxy/internal/metrics"
	"trireme.dev/proxy/internal/model"
)

// Config configures a Proxier.
type Config struct {
	NodeName string
	Family   model.Family
	// MinSyncPeriod is the least time between two syncs; changes arriving
	// meanwhile are batched. SyncPeriod is how often everything is
	// rewritten even without changes.
	MinSyncPeriod, SyncPeriod time.Duration
	// ResyncPeriod is the informers' resync period.
	ResyncPeriod time.Duration
	// NodePortCIDRs limits NodePorts to local addresses inside them; with
	// NodePortPrimary, to the Node's own InternalIPs; with neither, every
	// local address answers.
	NodePortCIDRs   []netip.Prefix
	NodePortPrimary bool
	// Conntrack deletes stale UDP flows; nil disables it.
	Conntrack conntrack.Runner
	// Recorder records Events on objects the proxy skips; nil records
	// none.
	Recorder events.EventRecorder
}

// Proxier is one running proxy.
type Proxier struct {
	cfg      Config
	client   kubernetes.Interface
	backend  backend.Interface
	tracker  *model.Tracker
	health   *healthcheck.ProxyHealth
	services *healthcheck.Services
	metrics  *metrics.Metrics
	log      logr.Logger

	trigger chan struct{}

	svcIndexer   cache.Indexer
	sliceIndexer cache.Indexer
	nodeIndexer  cache.Indexer
	nodeIPs      []netip.Addr // the Node's InternalIPs, for "primary"
}

// New builds a Proxier; Run starts it.
func New(cfg Config, client kubernetes.Interface, be backend.Interface, health *healthcheck.ProxyHealth, services *healthcheck.Services, m *metrics.Metrics) *Proxier {
	return &Proxier{
		cfg: cfg, client: client, backend: be, health: health, services: services, metrics: m,
		tracker: model.NewTracker(cfg.NodeName, cfg.Family),
		trigger: make(chan struct{}, 1),
	}
}

const sliceByService = "service"

// Run watches the apiserver and syncs rules until ctx ends.
func (p *Proxier) Run(ctx context.Context) error {
	p.log = logr.FromContextOrDiscard(ctx)
	// Services and slices that another proxy implementation claims are not
	// ours, and headless Services have nothing to proxy, as upstream.
	noProxyName, err := labels.Parse("!service.kubernetes.io/service-proxy-name")
	if err != nil {
		return err
	}
	sliceSel, err := labels.Parse("!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless")
	if err != nil {
		return err
	}
	svcFactory := informers.NewSharedInformerFactoryWithOptions(p.client, p.cfg.ResyncPeriod,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = noProxyName.String() }))
	sliceFactory := informers.NewSharedInformerFactoryWithOptions(p.client, p.cfg.ResyncPeriod,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sliceSel.String() }))
	nodeFactory := informers.NewSharedInformerFactoryWithOptions(p.client, p.cfg.ResyncPeriod,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", p.cfg.NodeName).String()
		}))

	svcInf := svcFactory.Core().V1().Services().Informer()
	sliceInf := sliceFactory.Discovery().V1().EndpointSlices().Informer()
	nodeInf := nodeFactory.Core().V1().Nodes().Informer()
	if err := sliceInf.AddIndexers(cache.Indexers{sliceByService: func(obj any) ([]string, error) {
		es, ok := obj.(*discovery.EndpointSlice)
		if !ok {
			return nil, nil
		}
		if n, ok := model.ServiceOfSlice(es); ok {
			return []string{n.String()}, nil
		}
		return nil, nil
	}}); err != nil {
		return fmt.Errorf("index EndpointSlices: %w", err)
	}
	p.svcIndexer, p.sliceIndexer, p.nodeIndexer = svcInf.GetIndexer(), sliceInf.GetIndexer(), nodeInf.GetIndexer()

	mark := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		switch o := obj.(type) {
		case *v1.Service:
			p.tracker.Mark(model.NamespacedNameOf(o))
		case *discovery.EndpointSlice:
			n, ok := model.ServiceOfSlice(o)
			if !ok {
				return
			}
			p.tracker.Mark(n)
		default:
			return
		}
		p.queue()
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    mark,
		UpdateFunc: func(_, n any) { mark(n) },
		DeleteFunc: mark,
	}
	if _, err := svcInf.AddEventHandler(handler); err != nil {
		return err
	}
	if _, err := sliceInf.AddEventHandler(handler); err != nil {
		return err
	}
	nodeChanged := func(any) {
		// Which endpoints are local, and the "primary" node IPs, follow the
		// Node object.
		p.tracker.MarkAll()
		p.queue()
	}
	if _, err := nodeInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: nodeChanged, UpdateFunc: func(_, n any) { nodeChanged(n) }, DeleteFunc: nodeChanged,
	}); err != nil {
		return err
	}
	svcFactory.Start(ctx.Done())
	sliceFactory.Start(ctx.Done())
	nodeFactory.Start(ctx.Done())
	defer svcFactory.Shutdown()
	defer sliceFactory.Shutdown()
	defer nodeFactory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), svcInf.HasSynced, sliceInf.HasSynced, nodeInf.HasSynced) {
		return ctx.Err()
	}
	p.log.Info("Caches synced; starting sync loop", "node", p.cfg.NodeName)
	p.tracker.MarkAll()
	p.loop(ctx)
	p.services.Close()
	return nil
}

// queue asks for a sync; it never blocks.
func (p *Proxier) queue() {
	p.health.Queued()
	select {
	case p.trigger <- struct{}{}:
	default:
	}
}

// loop runs syncs: on a trigger, but not sooner than MinSyncPeriod after
// the previous one; fully every SyncPeriod; after a failure, fully again
// with back-off.
func (p *Proxier) loop(ctx context.Context) {
	var last time.Time
	full := true
	backoff := p.cfg.MinSyncPeriod
	periodic := time.NewTimer(0)
	defer periodic.Stop()
	var wait <-chan time.Time
	pending := true
	for {
		if pending && wait == nil {
			delay := time.Until(last.Add(p.cfg.MinSyncPeriod))
			wait = time.After(max(delay, 0))
		}
		select {
		case <-ctx.Done():
			return
		case <-p.trigger:
			pending = true
			continue
		case <-periodic.C:
			full, pending = true, true
			continue
		case <-wait:
		}
		wait = nil
		last = time.Now()
		if err := p.sync(ctx, full); err != nil {
			p.metrics.SyncFailures.Inc()
			p.health.Queued()
			p.log.Error(err, "Sync failed; retrying with a full sync", "in", backoff)
			full, pending = true, true
			last = time.Now().Add(backoff - p.cfg.MinSyncPeriod)
			backoff = min(max(2*backoff, 100*time.Millisecond), p.cfg.SyncPeriod)
			continue
		}
		backoff = p.cfg.MinSyncPeriod
		if full {
			periodic.Reset(p.cfg.SyncPeriod)
		}
		full, pending = false, false
	}
}

type source struct{ p *Proxier }

func (s source) Get(name types.NamespacedName) (*v1.Service, []*discovery.EndpointSlice) {
	var svc *v1.Service
	if obj, ok, _ := s.p.svcIndexer.GetByKey(name.String()); ok {
		svc, _ = obj.(*v1.Service)
	}
	objs, _ := s.p.sliceIndexer.ByIndex(sliceByService, name.String())
	slices := make([]*discovery.EndpointSlice, 0, len(objs))
	for _, o := range objs {
		if es, ok := o.(*discovery.EndpointSlice); ok {
			slices = append(slices, es)
		}
	}
	return svc, slices
}

func (p *Proxier) allServices() []types.NamespacedName {
	var out []types.NamespacedName
	for _, obj := range p.svcIndexer.List() {
		if svc, ok := obj.(*v1.Service); ok {
			out = append(out, model.NamespacedNameOf(svc))
		}
	}
	return out
}

func (p *Proxier) sync(ctx context.Context, full bool) error {
	start := time.Now()
	p.refreshNode()
	state, ch := p.tracker.Apply(source{p}, p.allServices)
	for _, s := range ch.Skips {
		p.metrics.Skipped.Inc()
		p.log.Info("Skipping object", "object", s.Object, "reason", s.Reason)
		if p.cfg.Recorder != nil && s.EventReason != "" {
			ref := s.Ref
			p.cfg.Recorder.Eventf(&ref, nil, v1.EventTypeWarning, s.EventReason, "SyncProxyRules", "%s", s.Reason)
		}
	}
	npIPs, err := p.nodePortIPs()
	if err != nil {
		return err
	}
	res, err := p.backend.Sync(ctx, backend.Request{State: state, Changed: ch.Ports, Full: full, NodePortIPs: npIPs})
	if err != nil {
		// The tracker already forgot what changed: the retry is full.
		return err
	}
	kind := "partial"
	if full {
		kind = "full"
	}
	took := time.Since(start)
	p.metrics.SyncDuration.WithLabelValues(kind).Observe(took.Seconds())
	p.metrics.RulesWritten.WithLabelValues(kind).Add(float64(res.Rules))
	p.metrics.Rules.Set(float64(res.Total))
	p.metrics.LastSync.SetToCurrentTime()
	p.health.Synced(start)
	eps, hc := 0, map[int32]healthcheck.Service{}
	for _, sp := range state {
		eps += len(sp.Endpoints)
		if sp.HealthCheckNodePort != 0 {
			hc[sp.HealthCheckNodePort] = healthcheck.Service{Name: sp.Name.NamespacedName, LocalEndpoints: len(sp.LocalEndpoints())}
		}
	}
	p.metrics.Services.Set(float64(len(state)))
	p.metrics.Endpoints.Set(float64(eps))
	if err := p.services.Sync(hc); err != nil {
		p.log.Error(err, "Health check servers")
	}
	if p.cfg.Conntrack != nil && len(ch.StaleUDP) > 0 {
		if err := conntrack.Clear(ctx, p.cfg.Conntrack, ch.StaleUDP); err != nil {
			p.log.Error(err, "Clearing stale UDP conntrack entries")
		}
	}
	if full {
		// A full sync's transaction text is the largest garbage the proxy
		// makes (tens of MiB at 10,000 Services); hand it back to the OS
		// rather than carry it in RSS until the next one.
		debug.FreeOSMemory()
	}
	p.log.V(2).Info("Synced rules", "kind", kind, "servicePorts", len(state), "changed", len(ch.Ports), "written", res.Rules, "took", took)
	return nil
}

func (p *Proxier) refreshNode() {
	obj, ok, _ := p.nodeIndexer.GetByKey(p.cfg.NodeName)
	p.nodeIPs = nil
	if !ok {
		return
	}
	node, _ := obj.(*v1.Node)
	if node == nil {
		return
	}
	for _, a := range node.Status.Addresses {
		if a.Type != v1.NodeInternalIP {
			continue
		}
		if ip, err := netip.ParseAddr(a.Address); err == nil && (ip.Is4() == (p.cfg.Family == model.IPv4)) {
			p.nodeIPs = append(p.nodeIPs, ip)
		}
	}
}

// nodePortIPs returns the addresses NodePorts answer on, nil for all.
func (p *Proxier) nodePortIPs() ([]netip.Addr, error) {
	if p.cfg.NodePortPrimary {
		if len(p.nodeIPs) == 0 {
			return []netip.Addr{}, nil
		}
		return slices.Clone(p.nodeIPs), nil
	}
	if len(p.cfg.NodePortCIDRs) == 0 {
		return nil, nil
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("list local addresses: %w", err)
	}
	out := []netip.Addr{}
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(ipn.IP)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		if ip.Is4() != (p.cfg.Family == model.IPv4) {
			continue
		}
		for _, c := range p.cfg.NodePortCIDRs {
			if c.Contains(ip) {
				out = append(out, ip)
				break
			}
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return slices.Compact(out), nil
}
