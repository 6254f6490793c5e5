// Package endpointslice is the controller that keeps, for every Service
// with a selector, EndpointSlices listing the pods it selects. The slice
// arithmetic (ports, conditions, 100 endpoints a slice, topology hints) is
// upstream's published reconciler in k8s.io/endpointslice; this package
// decides when to run it.
package endpointslice

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	discoveryinformers "k8s.io/client-go/informers/discovery/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	esreconciler "k8s.io/endpointslice"
	"k8s.io/endpointslice/topologycache"
	esutil "k8s.io/endpointslice/util"

	"trireme.dev/controller-manager/internal/selection"
	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "endpointslice"

// ManagedBy is the endpointslice.kubernetes.io/managed-by value of the
// slices this controller owns, as upstream spells it.
const ManagedBy = "endpointslice-controller.k8s.io"

// DefaultMaxEndpointsPerSlice is upstream's --max-endpoints-per-slice.
const DefaultMaxEndpointsPerSlice = 100

// Options configure the controller; fields that name no default are
// required.
type Options struct {
	// Client writes EndpointSlices.
	Client kubernetes.Interface
	// Services, Pods, Nodes and Slices are the shared informers; New
	// registers its handlers on them (on Nodes only with TopologyHints).
	Services coreinformers.ServiceInformer
	Pods     coreinformers.PodInformer
	Nodes    coreinformers.NodeInformer
	Slices   discoveryinformers.EndpointSliceInformer
	// Recorder records the controller's Events.
	Recorder record.EventRecorder
	// MaxEndpoints is --max-endpoints-per-slice; 0 means
	// DefaultMaxEndpointsPerSlice (100).
	MaxEndpoints int32
	// BatchPeriod is how long pod changes are batched before their
	// Services are synced (--endpointslice-updates-batch-period); 0,
	// upstream's default, syncs at once.
	BatchPeriod time.Duration
	// TopologyHints turns on zone hints for Services that ask for them;
	// false writes none.
	TopologyHints bool
}

// Controller reconciles Services' EndpointSlices; its queue holds Service
// keys.
type Controller struct {
	client      kubernetes.Interface
	recorder    record.EventRecorder
	services    corelisters.ServiceLister
	nodes       corelisters.NodeLister
	selection   *selection.Index
	synced      []cache.InformerSynced
	tracker     *esutil.EndpointSliceTracker
	triggers    *esutil.TriggerTimeTracker
	topology    *topologycache.TopologyCache
	reconciler  *esreconciler.Reconciler
	batchPeriod time.Duration
	loop        *worker.Loop
}

// New returns the controller with its event handlers registered.
func New(o Options) (*Controller, error) {
	if o.MaxEndpoints <= 0 {
		o.MaxEndpoints = DefaultMaxEndpointsPerSlice
	}
	c := &Controller{
		client:      o.Client,
		recorder:    o.Recorder,
		services:    o.Services.Lister(),
		nodes:       o.Nodes.Lister(),
		tracker:     esutil.NewEndpointSliceTracker(),
		triggers:    esutil.NewTriggerTimeTracker(),
		batchPeriod: o.BatchPeriod,
		synced: []cache.InformerSynced{
			o.Services.Informer().HasSynced, o.Pods.Informer().HasSynced,
			o.Nodes.Informer().HasSynced, o.Slices.Informer().HasSynced,
		},
	}
	sel, err := selection.New(o.Pods.Informer(), o.Services.Informer(), o.Slices.Informer())
	if err != nil {
		return nil, err
	}
	c.selection = sel
	if o.TopologyHints {
		c.topology = topologycache.NewTopologyCache()
	}
	c.reconciler = esreconciler.NewReconciler(o.Client, c.nodes, o.MaxEndpoints, c.tracker, c.topology, o.Recorder, ManagedBy)
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
	if _, err := o.Slices.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.sliceChanged,
		UpdateFunc: func(_, obj any) { c.sliceChanged(obj) },
		DeleteFunc: c.sliceDeleted,
	}); err != nil {
		return nil, fmt.Errorf("watch endpointslices: %w", err)
	}
	if c.topology != nil {
		if _, err := o.Nodes.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { c.nodesChanged() },
			UpdateFunc: func(any, any) { c.nodesChanged() },
			DeleteFunc: func(any) { c.nodesChanged() },
		}); err != nil {
			return nil, fmt.Errorf("watch nodes: %w", err)
		}
	}
	return c, nil
}

// Run reconciles with workers goroutines until ctx ends.
func (c *Controller) Run(ctx context.Context, workers int) {
	c.loop.Run(ctx, workers, c.synced...)
}

// podChanged queues the Services whose endpoints a pod event may change.
// Pod updates are batched by batchPeriod, as upstream's
// --endpointslice-updates-batch-period, so a burst costs one write.
func (c *Controller) podChanged(old, obj any) {
	services, err := c.selection.ServicesToUpdate(esutil.GetPodUpdateProjectionKey(old, obj))
	if err != nil {
		return
	}
	for svc := range services {
		c.loop.AddAfter(svc, c.batchPeriod)
	}
}

func (c *Controller) sliceChanged(obj any) {
	slice, ok := worker.ObjectAs[*discoveryv1.EndpointSlice](obj)
	if !ok || !c.reconciler.ManagedByController(slice) {
		return
	}
	// A slice this controller just wrote needs no second look; anything
	// else (someone edited or created it) does.
	if c.tracker.ShouldSync(slice) {
		c.queueSliceService(slice)
	}
}

func (c *Controller) sliceDeleted(obj any) {
	slice, ok := worker.ObjectAs[*discoveryv1.EndpointSlice](obj)
	if !ok || !c.reconciler.ManagedByController(slice) || !c.tracker.Has(slice) {
		return
	}
	// HandleDeletion reports false for a deletion this controller did not
	// make: someone else deleted a slice, so the Service needs it again.
	if !c.tracker.HandleDeletion(slice) {
		c.queueSliceService(slice)
	}
}

func (c *Controller) queueSliceService(slice *discoveryv1.EndpointSlice) {
	key, err := esreconciler.ServiceControllerKey(slice)
	if err != nil {
		return
	}
	c.loop.AddAfter(key, c.batchPeriod)
}

// nodesChanged feeds the topology cache the nodes' zones and CPUs, and
// queues the Services whose hints that may change.
func (c *Controller) nodesChanged() {
	nodes, err := c.nodes.List(labels.Everything())
	if err != nil {
		return
	}
	before := c.topology.GetOverloadedServices()
	c.topology.SetNodes(logr.Discard(), nodes)
	after := c.topology.GetOverloadedServices()
	for _, key := range append(before, after...) {
		c.loop.Add(key)
	}
}

// errStale says the slice cache lags this controller's own writes.
var errStale = errors.New("endpointslice cache is older than this controller's last write")

// sync reconciles the slices of the Service named by key.
func (c *Controller) sync(ctx context.Context, key string) error {
	log := logr.FromContextOrDiscard(ctx)
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	svc, err := c.services.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.triggers.DeleteService(ns, name)
		c.reconciler.DeleteService(ns, name)
		// Owner references make the garbage collector delete the slices.
		return nil
	}
	if err != nil {
		return fmt.Errorf("get service %s: %w", key, err)
	}
	// ExternalName Services have no endpoints; selector-less Services are
	// the mirroring controller's.
	if svc.Spec.Type == corev1.ServiceTypeExternalName || svc.Spec.Selector == nil {
		return nil
	}
	pods, err := c.selection.Pods(ns, svc.Spec.Selector)
	if err != nil {
		return fmt.Errorf("list pods of service %s: %w", key, err)
	}
	cached, err := c.selection.Slices(ns, name)
	if err != nil {
		return err
	}
	slices := cached[:0:0]
	for _, s := range cached {
		if s.DeletionTimestamp == nil && s.Labels[discoveryv1.LabelManagedBy] == ManagedBy {
			slices = append(slices, s)
		}
	}
	if c.tracker.StaleSlices(svc, slices) {
		return fmt.Errorf("service %s: %w", key, errStale)
	}
	trigger := c.triggers.ComputeEndpointLastChangeTriggerTime(ns, svc, pods)
	if err := c.reconciler.Reconcile(log, svc, pods, slices, trigger); err != nil {
		c.recorder.Eventf(svc, corev1.EventTypeWarning, "FailedToUpdateEndpointSlices",
			"Error updating Endpoint Slices for Service %s: %v", key, err)
		return fmt.Errorf("reconcile endpointslices of service %s: %w", key, err)
	}
	return nil
}
