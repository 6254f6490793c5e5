// Package endpoints is the controller that keeps the legacy Endpoints
// object of every Service with a selector: ready and not-ready addresses
// of the pods it selects, grouped into subsets by port, truncated at 1,000
// addresses with the endpoints.kubernetes.io/over-capacity annotation as
// upstream.
package endpoints

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	esreconciler "k8s.io/endpointslice"
	esutil "k8s.io/endpointslice/util"

	"trireme.dev/controller-manager/internal/selection"
	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "endpoint"

const (
	// MaxCapacity is the number of addresses one Endpoints may hold.
	MaxCapacity = 1000
	// OverCapacityAnnotation marks an Endpoints truncated at MaxCapacity.
	OverCapacityAnnotation = "endpoints.kubernetes.io/over-capacity"
	// TruncatedValue is OverCapacityAnnotation's value.
	TruncatedValue = "truncated"
	// headlessLabel marks the Endpoints of a headless Service.
	headlessLabel = "service.kubernetes.io/headless"
)

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client writes Endpoints.
	Client kubernetes.Interface
	// Services, Pods and Endpoints are the shared informers; New registers
	// its handlers on all three.
	Services  coreinformers.ServiceInformer
	Pods      coreinformers.PodInformer
	Endpoints coreinformers.EndpointsInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// BatchPeriod is how long pod changes are batched before their
	// Services are synced (upstream's --endpoint-updates-batch-period); 0,
	// upstream's default, syncs at once.
	BatchPeriod time.Duration
}

// Controller reconciles Endpoints; its queue holds Service keys.
type Controller struct {
	client      kubernetes.Interface
	recorder    record.EventRecorder
	services    corelisters.ServiceLister
	endpoints   corelisters.EndpointsLister
	selection   *selection.Index
	synced      []cache.InformerSynced
	triggers    *esutil.TriggerTimeTracker
	batchPeriod time.Duration
	loop        *worker.Loop
	writes      writeTracker
}

// New returns the controller with its event handlers registered.
func New(o Options) (*Controller, error) {
	c := &Controller{
		client:      o.Client,
		recorder:    o.Recorder,
		services:    o.Services.Lister(),
		endpoints:   o.Endpoints.Lister(),
		triggers:    esutil.NewTriggerTimeTracker(),
		batchPeriod: o.BatchPeriod,
		synced: []cache.InformerSynced{o.Services.Informer().HasSynced, o.Pods.Informer().HasSynced,
			o.Endpoints.Informer().HasSynced},
	}
	sel, err := selection.New(o.Pods.Informer(), o.Services.Informer(), nil)
	if err != nil {
		return nil, err
	}
	c.selection = sel
	c.loop = worker.New(Name, c.sync)
	if _, err := o.Services.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.loop.AddObject,
		UpdateFunc: func(_, obj any) { c.loop.AddObject(obj) },
		DeleteFunc: c.loop.AddObject,
	}); err != nil {
		return nil, fmt.Errorf("watch services: %w", err)
	}
	if _, err := o.Pods.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.podChanged(nil, obj) },
		UpdateFunc: c.podChanged,
		DeleteFunc: func(obj any) { c.podChanged(nil, obj) },
	}); err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	// Someone else writing an Endpoints this controller manages is undone;
	// the controller's own writes coming back need no second look, and
	// an Endpoints of no Service is someone's own, left alone as upstream
	// does (syncing it would delete it).
	if _, err := o.Endpoints.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) {
			ep, ok := obj.(*corev1.Endpoints)
			if !ok || c.writes.own(ep) {
				return
			}
			if _, err := c.services.Services(ep.Namespace).Get(ep.Name); err != nil {
				return
			}
			c.loop.AddObject(obj)
		},
		DeleteFunc: func(obj any) {
			if ep, ok := worker.ObjectAs[*corev1.Endpoints](obj); ok {
				c.writes.forget(ep.Namespace + "/" + ep.Name)
			}
			c.loop.AddObject(obj)
		},
	}); err != nil {
		return nil, fmt.Errorf("watch endpoints: %w", err)
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

func (c *Controller) podChanged(old, obj any) {
	services, err := c.selection.ServicesToUpdate(esutil.GetPodUpdateProjectionKey(old, obj))
	if err != nil {
		return
	}
	for svc := range services {
		c.loop.AddAfter(svc, c.batchPeriod)
	}
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	svc, err := c.services.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.triggers.DeleteService(ns, name)
		err := c.client.CoreV1().Endpoints(ns).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete endpoints %s: %w", key, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get service %s: %w", key, err)
	}
	if svc.Spec.Selector == nil {
		// Selector-less Services' Endpoints are their owners' to write.
		return nil
	}
	pods, err := c.selection.Pods(ns, svc.Spec.Selector)
	if err != nil {
		return fmt.Errorf("list pods of service %s: %w", key, err)
	}
	subsets := Subsets(svc, pods)
	subsets, truncated := Truncate(subsets, MaxCapacity)

	current, err := c.endpoints.Endpoints(ns).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("get endpoints %s: %w", key, err)
	}
	exists := err == nil
	if c.writes.stale(key, current) {
		// Writing now would conflict with this controller's own last
		// write; the informer delivers it shortly.
		return fmt.Errorf("endpoints %s: %w", key, errStale)
	}
	want := desired(svc, current, subsets, truncated)
	trigger := c.triggers.ComputeEndpointLastChangeTriggerTime(ns, svc, pods)
	if exists && apiequality.Semantic.DeepEqual(current.Subsets, want.Subsets) &&
		maps.Equal(current.Labels, want.Labels) &&
		current.Annotations[OverCapacityAnnotation] == want.Annotations[OverCapacityAnnotation] {
		return nil
	}
	if !trigger.IsZero() {
		want.Annotations[corev1.EndpointsLastChangeTriggerTime] = trigger.UTC().Format(time.RFC3339Nano)
	} else {
		delete(want.Annotations, corev1.EndpointsLastChangeTriggerTime)
	}
	var written *corev1.Endpoints
	if exists {
		written, err = c.client.CoreV1().Endpoints(ns).Update(ctx, want, metav1.UpdateOptions{})
	} else {
		written, err = c.client.CoreV1().Endpoints(ns).Create(ctx, want, metav1.CreateOptions{})
	}
	switch {
	case err == nil:
		c.writes.wrote(key, current, written)
		return nil
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return nil
	case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err):
		return fmt.Errorf("write endpoints %s: %w", key, err)
	default:
		c.recorder.Eventf(svc, corev1.EventTypeWarning, "FailedToUpdateEndpoint", "Failed to update endpoint %s: %v", key, err)
		return fmt.Errorf("write endpoints %s: %w", key, err)
	}
}

// errStale says the Endpoints cache is older than this controller's last
// write.
var errStale = errors.New("endpoints cache is older than this controller's last write")

// writeTracker remembers, per Endpoints key, the resourceVersion this
// controller's last write replaced and the one it produced, as upstream's
// stale Endpoints tracker does: a sync reading the replaced version from a
// lagging cache waits instead of writing into a conflict, and the write's
// own watch event is not queued again.
type writeTracker struct {
	mu sync.Mutex
	m  map[string]write
}

type write struct {
	// replaced is the version written over; absent when the write created
	// the Endpoints.
	replaced string
	produced string
}

// absent stands for "no Endpoints in the cache" as a replaced version.
const absent = ""

func (t *writeTracker) wrote(key string, replaced, produced *corev1.Endpoints) {
	w := write{replaced: absent, produced: produced.ResourceVersion}
	if replaced != nil {
		w.replaced = replaced.ResourceVersion
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]write{}
	}
	t.m[key] = w
}

// stale reports whether cached (nil when the cache has none) is what the
// last write replaced. Once the cache has moved on the entry is dropped.
func (t *writeTracker) stale(key string, cached *corev1.Endpoints) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	w, ok := t.m[key]
	if !ok {
		return false
	}
	rv := absent
	if cached != nil {
		rv = cached.ResourceVersion
	}
	if rv == w.replaced {
		return true
	}
	delete(t.m, key)
	return false
}

// own reports whether ep is the version this controller's last write
// produced.
func (t *writeTracker) own(ep *corev1.Endpoints) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	w, ok := t.m[ep.Namespace+"/"+ep.Name]
	return ok && w.produced == ep.ResourceVersion
}

// forget drops key's entry: the Endpoints was deleted, so a missing cache
// entry is no longer a sign of lag.
func (t *writeTracker) forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, key)
}

// desired is the Endpoints to write: current's metadata (or a new object)
// with the Service's labels and the computed subsets.
func desired(svc *corev1.Service, current *corev1.Endpoints, subsets []corev1.EndpointSubset, truncated bool) *corev1.Endpoints {
	want := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: svc.Name, Namespace: svc.Namespace}}
	if current != nil {
		want = current.DeepCopy()
	}
	want.Subsets = subsets
	want.Labels = maps.Clone(svc.Labels)
	if want.Labels == nil {
		want.Labels = map[string]string{}
	}
	// The mirroring controller must not copy these back into slices: the
	// EndpointSlice controller already made them.
	want.Labels[discoveryv1.LabelSkipMirror] = "true"
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		want.Labels[headlessLabel] = ""
	}
	if want.Annotations == nil {
		want.Annotations = map[string]string{}
	}
	if truncated {
		want.Annotations[OverCapacityAnnotation] = TruncatedValue
	} else {
		delete(want.Annotations, OverCapacityAnnotation)
	}
	return want
}

type addrKey struct {
	ip    string
	ready bool
}

// Subsets computes the Endpoints subsets of svc over pods: one address a
// pod (ready, or not ready unless publishNotReadyAddresses), with every
// Service port resolved against the pod (named target ports included);
// addresses sharing a port set share a subset.
func Subsets(svc *corev1.Service, pods []*corev1.Pod) []corev1.EndpointSubset {
	ports := map[addrKey][]corev1.EndpointPort{}
	addrs := map[addrKey]corev1.EndpointAddress{}
	for _, pod := range pods {
		if !esutil.ShouldPodBeInEndpoints(pod, svc.Spec.PublishNotReadyAddresses) {
			continue
		}
		ip := podIP(svc, pod)
		if ip == "" {
			continue
		}
		addr := corev1.EndpointAddress{
			IP:       ip,
			NodeName: nonEmpty(pod.Spec.NodeName),
			TargetRef: &corev1.ObjectReference{
				Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
			},
		}
		if esutil.ShouldSetHostname(pod, svc) {
			addr.Hostname = pod.Spec.Hostname
		}
		k := addrKey{ip: ip, ready: svc.Spec.PublishNotReadyAddresses || esutil.IsPodReady(pod)}
		if len(svc.Spec.Ports) == 0 {
			// Headless Services may have no ports at all.
			if svc.Spec.ClusterIP == corev1.ClusterIPNone {
				addrs[k] = addr
				ports[k] = ports[k][:0:0]
			}
			continue
		}
		for i := range svc.Spec.Ports {
			sp := &svc.Spec.Ports[i]
			num, err := esreconciler.FindPort(pod, sp)
			if err != nil {
				continue
			}
			addrs[k] = addr
			ports[k] = append(ports[k], corev1.EndpointPort{
				Name: sp.Name, Port: int32(num), Protocol: sp.Protocol, AppProtocol: sp.AppProtocol,
			})
		}
	}
	// Group addresses by their port set.
	groups := map[string]*corev1.EndpointSubset{}
	for k, addr := range addrs {
		ps := ports[k]
		slices.SortFunc(ps, func(a, b corev1.EndpointPort) int {
			return strings.Compare(portKey(a), portKey(b))
		})
		var sig strings.Builder
		for _, p := range ps {
			sig.WriteString(portKey(p) + ";")
		}
		g, ok := groups[sig.String()]
		if !ok {
			g = &corev1.EndpointSubset{Ports: ps}
			groups[sig.String()] = g
		}
		if k.ready {
			g.Addresses = append(g.Addresses, addr)
		} else {
			g.NotReadyAddresses = append(g.NotReadyAddresses, addr)
		}
	}
	var out []corev1.EndpointSubset
	for _, sig := range slices.Sorted(maps.Keys(groups)) {
		g := groups[sig]
		sortAddresses(g.Addresses)
		sortAddresses(g.NotReadyAddresses)
		out = append(out, *g)
	}
	return out
}

func portKey(p corev1.EndpointPort) string {
	return p.Name + "/" + string(p.Protocol) + "/" + strconv.Itoa(int(p.Port))
}

func sortAddresses(a []corev1.EndpointAddress) {
	slices.SortFunc(a, func(x, y corev1.EndpointAddress) int {
		if c := strings.Compare(x.IP, y.IP); c != 0 {
			return c
		}
		return strings.Compare(string(x.TargetRef.UID), string(y.TargetRef.UID))
	})
}

// Truncate keeps at most max addresses across subsets, ready ones first,
// each subset losing a share proportional to its size as upstream does. It
// reports whether anything was cut.
func Truncate(subsets []corev1.EndpointSubset, max int) ([]corev1.EndpointSubset, bool) {
	total := 0
	for _, s := range subsets {
		total += len(s.Addresses) + len(s.NotReadyAddresses)
	}
	if total <= max {
		return subsets, false
	}
	ready := 0
	for _, s := range subsets {
		ready += len(s.Addresses)
	}
	keepReady := min(ready, max)
	keepNotReady := max - keepReady
	out := make([]corev1.EndpointSubset, len(subsets))
	for i, s := range subsets {
		s.Addresses = s.Addresses[:share(len(s.Addresses), ready, keepReady)]
		s.NotReadyAddresses = s.NotReadyAddresses[:share(len(s.NotReadyAddresses), total-ready, keepNotReady)]
		out[i] = s
	}
	return out, true
}

// share is n's proportion of keep, out of total, rounded down so the
// shares never add up to more than keep.
func share(n, total, keep int) int {
	if total == 0 || n == 0 {
		return 0
	}
	return min(n, n*keep/total)
}

// podIP is the pod's address of the Service's first IP family.
func podIP(svc *corev1.Service, pod *corev1.Pod) string {
	wantV6 := len(svc.Spec.IPFamilies) > 0 && svc.Spec.IPFamilies[0] == corev1.IPv6Protocol
	ips := pod.Status.PodIPs
	if len(ips) == 0 && pod.Status.PodIP != "" {
		ips = []corev1.PodIP{{IP: pod.Status.PodIP}}
	}
	for _, ip := range ips {
		if strings.Contains(ip.IP, ":") == wantV6 {
			return ip.IP
		}
	}
	return ""
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
