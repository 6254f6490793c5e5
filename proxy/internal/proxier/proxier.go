package proxier

import (
	"context"
	"errors"
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
	// Family is the IP family New's single back end serves; NewDualStack
	// takes one back end per family instead.
	Family model.Family
	// MinSyncPeriod is the least time between two syncs; changes arriving
	// meanwhile are batched. SyncPeriod is how often everything is
	// rewritten even without changes.
	MinSyncPeriod, SyncPeriod time.Duration
	// ResyncPeriod is the informers' resync period.
	ResyncPeriod time.Duration
	// NodePortCIDRs limits NodePorts to local addresses inside them; with
	// NodePortPrimary, to the Node's own InternalIPs; with neither, every
	// local address answers. Each family uses the CIDRs of its own family,
	// and every local address of its family when there are none, as
	// upstream.
	NodePortCIDRs   []netip.Prefix
	NodePortPrimary bool
	// Conntrack deletes stale UDP flows; nil disables it.
	Conntrack conntrack.Runner
	// Recorder records Events on objects the proxy skips; nil records
	// none.
	Recorder events.EventRecorder
}

// Backend is the back end of one IP family.
type Backend struct {
	Family  model.Family
	Backend backend.Interface
}

// family is the part of a Proxier that is per IP family: its model and
// back end, and what its last successful sync left.
type family struct {
	fam     model.Family
	backend backend.Interface
	tracker *model.Tracker
	// needFull is set after a failed sync: the tracker already forgot
	// what changed, so the retry rewrites everything.
	needFull bool
	// total, ports and endpoints are the back end's rule count and the
	// model's size after the last successful sync, for the summed gauges.
	total, ports, endpoints int
	hc                      map[int32]healthcheck.Service
}

// Proxier is one running proxy, serving one IP family or, dual-stack,
// both, from one set of informers.
type Proxier struct {
	cfg      Config
	client   kubernetes.Interface
	families []*family
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

// New builds a single-stack Proxier of cfg.Family; Run starts it.
func New(cfg Config, client kubernetes.Interface, be backend.Interface, health *healthcheck.ProxyHealth, services *healthcheck.Services, m *metrics.Metrics) *Proxier {
	return NewDualStack(cfg, client, []Backend{{Family: cfg.Family, Backend: be}}, health, services, m)
}

// NewDualStack builds a Proxier with one model and back end per entry of
// bes, as upstream kube-proxy's dual-stack mode: every Service's and
// EndpointSlice's addresses go to the back end of their family. health
// should track the families by their names (model.Family.String) when
// there are several.
func NewDualStack(cfg Config, client kubernetes.Interface, bes []Backend, health *healthcheck.ProxyHealth, services *healthcheck.Services, m *metrics.Metrics) *Proxier {
	p := &Proxier{
		cfg: cfg, client: client, health: health, services: services, metrics: m,
		trigger: make(chan struct{}, 1),
	}
	for _, b := range bes {
		p.families = append(p.families, &family{fam: b.Family, backend: b.Backend, tracker: model.NewTracker(cfg.NodeName, b.Family)})
	}
	return p
}

func (p *Proxier) dualStack() bool { return len(p.families) > 1 }

// healthName is the name health tracks family f by.
func (p *Proxier) healthName(f model.Family) string {
	if p.dualStack() {
		return f.String()
	}
	return ""
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
			p.markAll(model.NamespacedNameOf(o))
		case *discovery.EndpointSlice:
			n, ok := model.ServiceOfSlice(o)
			if !ok {
				return
			}
			p.markAll(n)
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
		for _, f := range p.families {
			f.tracker.MarkAll()
		}
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
	for _, f := range p.families {
		f.tracker.MarkAll()
	}
	p.loop(ctx)
	p.services.Close()
	return nil
}

// markAll marks the Service name in every family's tracker: a Service
// may have addresses, and its slices endpoints, in both.
func (p *Proxier) markAll(name types.NamespacedName) {
	for _, f := range p.families {
		f.tracker.Mark(name)
	}
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
			// The failed families retry fully on their own; a full sync
			// stays due until it succeeds, so the periodic timer restarts.
			pending = true
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

// sync applies the changes to every family's back end. A family whose
// write fails is retried fully later while the others stay synced; the
// error names every family that failed.
func (p *Proxier) sync(ctx context.Context, full bool) error {
	start := time.Now()
	p.refreshNode()
	var errs []error
	var stale []model.StaleFlow
	written, anyFull := 0, false
	seenSkip := map[model.Skip]bool{}
	for _, f := range p.families {
		state, ch := f.tracker.Apply(source{p}, p.allServices)
		for _, s := range ch.Skips {
			if (s.OtherFamily && p.dualStack()) || seenSkip[s] {
				// The other family's proxier takes that slice; a Service
				// skipped in both families is reported once.
				continue
			}
			seenSkip[s] = true
			p.metrics.Skipped.Inc()
			p.log.Info("Skipping object", "object", s.Object, "reason", s.Reason)
			if p.cfg.Recorder != nil && s.EventReason != "" {
				ref := s.Ref
				p.cfg.Recorder.Eventf(&ref, nil, v1.EventTypeWarning, s.EventReason, "SyncProxyRules", "%s", s.Reason)
			}
		}
		famFull := full || f.needFull
		npIPs, err := p.nodePortIPs(f.fam)
		if err == nil {
			var res backend.Result
			res, err = f.backend.Sync(ctx, backend.Request{State: state, Changed: ch.Ports, Full: famFull, NodePortIPs: npIPs})
			if err == nil {
				written += res.Rules
				f.total = res.Total
			}
		}
		if err != nil {
			// The tracker already forgot what changed: the retry is full.
			f.needFull = true
			p.metrics.FamilySyncFailures.WithLabelValues(f.fam.String()).Inc()
			if p.dualStack() {
				err = fmt.Errorf("%s: %w", f.fam, err)
			}
			errs = append(errs, err)
			continue
		}
		f.needFull = false
		anyFull = anyFull || famFull
		p.health.SyncedFamily(p.healthName(f.fam), start)
		p.metrics.FamilyLastSync.WithLabelValues(f.fam.String()).SetToCurrentTime()
		f.ports, f.endpoints, f.hc = len(state), 0, map[int32]healthcheck.Service{}
		for _, sp := range state {
			f.endpoints += len(sp.Endpoints)
			if sp.HealthCheckNodePort != 0 {
				f.hc[sp.HealthCheckNodePort] = healthcheck.Service{Name: sp.Name.NamespacedName, LocalEndpoints: len(sp.LocalEndpoints())}
			}
		}
		stale = append(stale, ch.Stale...)
	}
	kind := "partial"
	if anyFull {
		kind = "full"
	}
	took := time.Since(start)
	// Gauges are summed over the families; each family's sync time is
	// also its own gauge.
	total, ports, eps, hc := 0, 0, 0, map[int32]healthcheck.Service{}
	for _, f := range p.families {
		total, ports, eps = total+f.total, ports+f.ports, eps+f.endpoints
		for port, s := range f.hc {
			// A pod has an address in each family: a node has as many
			// local endpoints as the family with the most.
			if old, ok := hc[port]; !ok || s.LocalEndpoints > old.LocalEndpoints {
				hc[port] = s
			}
		}
	}
	p.metrics.RulesWritten.WithLabelValues(kind).Add(float64(written))
	p.metrics.Rules.Set(float64(total))
	p.metrics.Services.Set(float64(ports))
	p.metrics.Endpoints.Set(float64(eps))
	if err := p.services.Sync(hc); err != nil {
		p.log.Error(err, "Health check servers")
	}
	if p.cfg.Conntrack != nil && len(stale) > 0 {
		if err := conntrack.Clear(ctx, p.cfg.Conntrack, stale); err != nil {
			p.log.Error(err, "Clearing stale conntrack entries")
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	p.metrics.SyncDuration.WithLabelValues(kind).Observe(took.Seconds())
	p.metrics.LastSync.SetToCurrentTime()
	if full {
		// A full sync's transaction text is the largest garbage the proxy
		// makes (tens of MiB at 10,000 Services); hand it back to the OS
		// rather than carry it in RSS until the next one.
		debug.FreeOSMemory()
	}
	p.log.V(2).Info("Synced rules", "kind", kind, "servicePorts", ports, "written", written, "took", took)
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
		if ip, err := netip.ParseAddr(a.Address); err == nil {
			p.nodeIPs = append(p.nodeIPs, ip.Unmap())
		}
	}
}

// nodePortIPs returns the addresses of family fam NodePorts answer on,
// nil for all.
func (p *Proxier) nodePortIPs(fam model.Family) ([]netip.Addr, error) {
	is4 := fam == model.IPv4
	if p.cfg.NodePortPrimary {
		out := []netip.Addr{}
		for _, ip := range p.nodeIPs {
			if ip.Is4() == is4 {
				out = append(out, ip)
			}
		}
		return out, nil
	}
	var cidrs []netip.Prefix
	for _, c := range p.cfg.NodePortCIDRs {
		if c.Addr().Is4() == is4 {
			cidrs = append(cidrs, c)
		}
	}
	if len(cidrs) == 0 {
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
		if ip.Is4() != is4 {
			continue
		}
		for _, c := range cidrs {
			if c.Contains(ip) {
				out = append(out, ip)
				break
			}
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return slices.Compact(out), nil
}
