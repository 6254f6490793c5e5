// Package garbagecollector is the controller that deletes objects whose
// owners are gone. It keeps a graph of owner references over every
// resource the apiserver serves (custom resources included, rediscovered
// periodically) from metadata informers, and carries out background,
// foreground and orphan deletion: the apiserver only marks foreground and
// orphan deletions with the foregroundDeletion and orphan finalizers, and
// this controller does the rest and removes them.
package garbagecollector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/retry"
	"k8s.io/client-go/util/workqueue"

	"trireme.dev/controller-manager/internal/metrics"
	"trireme.dev/controller-manager/internal/worker"
)

// Name is the controller's name in --controllers.
const Name = "garbagecollector"

// DefaultResyncPeriod is how often resources are rediscovered, as
// upstream.
const DefaultResyncPeriod = 30 * time.Second

// Options configure the collector; fields that name no default are
// required.
type Options struct {
	// Metadata reads, watches and deletes objects of every resource, and
	// patches their owner references and finalizers.
	Metadata metadata.Interface
	// Discovery lists the resources to watch.
	Discovery discovery.DiscoveryInterface
	// Recorder records the collector's Events.
	Recorder record.EventRecorder
	// ResyncPeriod is how often resources are rediscovered; 0 means
	// DefaultResyncPeriod (30s).
	ResyncPeriod time.Duration
}

// Controller is the garbage collector.
type Controller struct {
	meta      metadata.Interface
	discovery discovery.DiscoveryInterface
	recorder  record.EventRecorder
	mapper    atomic.Pointer[meta.RESTMapper]
	period    time.Duration
	resyncNow chan struct{}

	monMu    sync.Mutex
	monitors map[schema.GroupVersionResource]*monitor

	graph   *graph
	changes workqueue.TypedInterface[*event]
	absent  *absentCache
	del     *worker.Loop
	orphan  *worker.Loop
}

// New returns the collector; it watches nothing until Run.
func New(o Options) *Controller {
	if o.ResyncPeriod <= 0 {
		o.ResyncPeriod = DefaultResyncPeriod
	}
	gc := &Controller{
		meta:      o.Metadata,
		discovery: o.Discovery,
		recorder:  o.Recorder,
		period:    o.ResyncPeriod,
		resyncNow: make(chan struct{}, 1),
		monitors:  map[schema.GroupVersionResource]*monitor{},
		graph:     newGraph(),
		changes: workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[*event]{
			Name: "garbage_collector_graph_changes", MetricsProvider: metrics.WorkqueueProvider(),
		}),
		absent: newAbsentCache(10000),
	}
	gc.del = worker.New("garbage_collector_attempt_to_delete", gc.attemptToDelete)
	gc.orphan = worker.New("garbage_collector_attempt_to_orphan", gc.attemptToOrphan)
	return gc
}

// Run discovers resources, builds the graph and collects with workers
// goroutines until ctx ends.
func (gc *Controller) Run(ctx context.Context, workers int) {
	log := logr.FromContextOrDiscard(ctx)
	defer gc.stopMonitors()
	defer gc.changes.ShutDown()
	for {
		err := gc.resync(ctx)
		if err == nil || gc.mapper.Load() != nil {
			if err != nil {
				log.Error(err, "Partial discovery; collecting what was discovered")
			}
			break
		}
		log.Error(err, "Discovering resources for the garbage collector")
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Second):
		}
	}
	go gc.processChanges()
	go gc.resyncLoop(ctx, gc.period)
	var wg sync.WaitGroup
	wg.Go(func() { gc.del.Run(ctx, workers, gc.synced) })
	wg.Go(func() { gc.orphan.Run(ctx, workers, gc.synced) })
	wg.Wait()
}

// processChanges applies informer events to the graph, one at a time and
// in order, and queues the work they make.
func (gc *Controller) processChanges() {
	for {
		e, quit := gc.changes.Get()
		if quit {
			return
		}
		if e.typ == deleted {
			gc.absent.add(e.id.UID)
		}
		del, orphan := gc.graph.process(e)
		gc.changes.Done(e)
		for _, uid := range del {
			gc.del.Add(string(uid))
		}
		for _, uid := range orphan {
			gc.orphan.Add(string(uid))
		}
	}
}

// errNotSynced asks for a retry once every informer has synced.
var errNotSynced = errors.New("garbage collector graph not complete yet: informers still syncing")

// attemptToDelete looks again at the object uid: a virtual node is checked
// against the apiserver; an object in foreground deletion loses its
// finalizer once no blocking dependent remains; a dependent whose owners
// are all gone (or deleting in the foreground) is deleted; references to
// gone owners beside live ones are removed.
func (gc *Controller) attemptToDelete(ctx context.Context, key string) error {
	v, ok := gc.graph.get(types.UID(key))
	if !ok {
		return nil
	}
	if v.beingDeleted && !v.deletingDependents {
		return nil
	}
	if v.meta != nil && !v.virtual && v.meta.DeletionTimestamp == nil {
		// Decide from the informer's copy, and delete only if the object is
		// still at that resourceVersion: one request instead of two for
		// each dependent collected. A conflict means the copy is stale.
		cached := &metav1.PartialObjectMetadata{ObjectMeta: *v.meta}
		err := gc.decide(ctx, v, cached, v.meta.ResourceVersion)
		if !errors.Is(err, errStale) {
			return err
		}
	}
	latest, err := gc.getObject(ctx, v.id)
	switch {
	case apierrors.IsNotFound(err):
		gc.absent.add(v.id.UID)
		gc.changes.Add(&event{typ: virtualDeleted, id: v.id})
		return nil
	case err != nil:
		return fmt.Errorf("get %s: %w", v.id, err)
	}
	if latest.UID != v.id.UID {
		gc.absent.add(v.id.UID)
		gc.changes.Add(&event{typ: virtualDeleted, id: v.id})
		return nil
	}
	if v.virtual {
		// It exists: its informer will add it to the graph.
		return nil
	}
	if latest.DeletionTimestamp != nil {
		if slices.Contains(latest.Finalizers, FinalizerForeground) {
			return gc.processDeletingDependents(ctx, v)
		}
		return nil
	}
	return gc.decide(ctx, v, latest, "")
}

// errStale says a delete guarded by a cached resourceVersion found the
// object changed.
var errStale = errors.New("cached object is stale")

// decide collects the live object latest (or its cached copy, when rv,
// its resourceVersion, guards the deletion) by its owner references.
func (gc *Controller) decide(ctx context.Context, v view, latest *metav1.PartialObjectMetadata, rv string) error {
	refs := latest.OwnerReferences
	if len(refs) == 0 {
		return nil
	}
	solid, dangling, waiting, err := gc.classify(ctx, latest, v.id, refs)
	if err != nil {
		return err
	}
	switch {
	case len(solid) > 0:
		if len(dangling)+len(waiting) == 0 {
			return nil
		}
		drop := map[types.UID]bool{}
		for _, r := range append(dangling, waiting...) {
			drop[r.UID] = true
		}
		return gc.patch(ctx, v.id, func(m *metav1.ObjectMeta) bool {
			n := len(m.OwnerReferences)
			m.OwnerReferences = slices.DeleteFunc(m.OwnerReferences, func(r metav1.OwnerReference) bool { return drop[r.UID] })
			return n != len(m.OwnerReferences)
		}, false)
	case len(waiting) > 0 && len(v.dependents) > 0:
		// Its owner waits for it in the foreground and it has dependents of
		// its own: delete it in the foreground too, so they go first.
		for _, d := range v.dependents {
			if d.deletingDependents {
				// A dependent waiting on this object while this object's
				// owner waits on it would deadlock; stop blocking.
				if err := gc.unblockOwnerRefs(ctx, v.id, waiting); err != nil {
					return err
				}
				break
			}
		}
		return gc.deleteObject(ctx, v.id, metav1.DeletePropagationForeground, rv)
	default:
		policy := metav1.DeletePropagationBackground
		switch {
		case slices.Contains(latest.Finalizers, FinalizerOrphan):
			policy = metav1.DeletePropagationOrphan
		case slices.Contains(latest.Finalizers, FinalizerForeground):
			policy = metav1.DeletePropagationForeground
		}
		return gc.deleteObject(ctx, v.id, policy, rv)
	}
}

// processDeletingDependents finishes a foreground deletion once no
// dependent blocks it, and otherwise pushes the blocking dependents on.
func (gc *Controller) processDeletingDependents(ctx context.Context, v view) error {
	if !gc.synced() {
		return errNotSynced
	}
	blocking := 0
	for _, d := range v.dependents {
		if !d.blocking {
			continue
		}
		blocking++
		if !d.deletingDependents {
			gc.del.Add(string(d.id.UID))
		}
	}
	if blocking > 0 {
		return nil
	}
	return gc.patch(ctx, v.id, func(m *metav1.ObjectMeta) bool {
		n := len(m.Finalizers)
		m.Finalizers = slices.DeleteFunc(m.Finalizers, func(f string) bool { return f == FinalizerForeground })
		return n != len(m.Finalizers)
	}, true)
}

// attemptToOrphan removes the owner uid's references from all its
// dependents, then its orphan finalizer.
func (gc *Controller) attemptToOrphan(ctx context.Context, key string) error {
	if !gc.synced() {
		return errNotSynced
	}
	v, ok := gc.graph.get(types.UID(key))
	if !ok {
		return nil
	}
	var errs []error
	for _, d := range v.dependents {
		err := gc.patch(ctx, d.id, func(m *metav1.ObjectMeta) bool {
			n := len(m.OwnerReferences)
			m.OwnerReferences = slices.DeleteFunc(m.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == v.id.UID })
			return n != len(m.OwnerReferences)
		}, false)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("orphan dependents of %s: %w", v.id, errors.Join(errs...))
	}
	return gc.patch(ctx, v.id, func(m *metav1.ObjectMeta) bool {
		n := len(m.Finalizers)
		m.Finalizers = slices.DeleteFunc(m.Finalizers, func(f string) bool { return f == FinalizerOrphan })
		return n != len(m.Finalizers)
	}, true)
}

// classify sorts the owner references of an object: solid owners exist
// and are not deleting in the foreground; dangling ones are gone; waiting
// ones are deleting in the foreground.
func (gc *Controller) classify(ctx context.Context, obj *metav1.PartialObjectMetadata, id identity, refs []metav1.OwnerReference) (solid, dangling, waiting []metav1.OwnerReference, err error) {
	for _, ref := range refs {
		if gc.absent.has(ref.UID) {
			dangling = append(dangling, ref)
			continue
		}
		owner := identity{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: obj.Namespace, Name: ref.Name, UID: ref.UID}
		mapping, merr := gc.mapping(owner)
		if merr != nil {
			// Perhaps a custom resource not discovered yet: look again later
			// rather than guess the owner is gone.
			gc.warn(id, "OwnerRefInvalidKind", fmt.Sprintf("ownerReference %s/%s %s cannot be resolved: %v", ref.APIVersion, ref.Kind, ref.Name, merr))
			return nil, nil, nil, fmt.Errorf("resolve owner of %s: %w", id, merr)
		}
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace && obj.Namespace == "" {
			// A cluster-scoped object cannot be owned by a namespaced one:
			// the reference can never resolve.
			gc.warn(id, "OwnerRefInvalidNamespace", fmt.Sprintf("ownerRef %s/%s %s (uid %s) does not exist in namespace %q", ref.APIVersion, ref.Kind, ref.Name, ref.UID, obj.Namespace))
			dangling = append(dangling, ref)
			continue
		}
		if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
			owner.Namespace = ""
		}
		latest, gerr := gc.meta.Resource(mapping.Resource).Namespace(owner.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(gerr):
			gc.absent.add(ref.UID)
			dangling = append(dangling, ref)
		case gerr != nil:
			return nil, nil, nil, fmt.Errorf("get owner %s of %s: %w", owner, id, gerr)
		case latest.UID != ref.UID:
			gc.absent.add(ref.UID)
			dangling = append(dangling, ref)
		case latest.DeletionTimestamp != nil && slices.Contains(latest.Finalizers, FinalizerForeground):
			waiting = append(waiting, ref)
		default:
			solid = append(solid, ref)
		}
	}
	return solid, dangling, waiting, nil
}

func (gc *Controller) mapping(id identity) (*meta.RESTMapping, error) {
	gv, err := schema.ParseGroupVersion(id.APIVersion)
	if err != nil {
		return nil, err
	}
	m := gc.mapper.Load()
	if m == nil {
		return nil, errors.New("no REST mapper yet")
	}
	mapping, err := (*m).RESTMapping(gv.WithKind(id.Kind).GroupKind(), gv.Version)
	if meta.IsNoMatchError(err) {
		gc.requestResync()
	}
	return mapping, err
}

// getObject reads the current metadata of id from the apiserver.
func (gc *Controller) getObject(ctx context.Context, id identity) (*metav1.PartialObjectMetadata, error) {
	mapping, err := gc.mapping(id)
	if err != nil {
		return nil, err
	}
	ns := id.Namespace
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		ns = ""
	}
	return gc.meta.Resource(mapping.Resource).Namespace(ns).Get(ctx, id.Name, metav1.GetOptions{})
}

// deleteObject deletes id with the given propagation; with rv, only if
// the object is still at that resourceVersion (errStale otherwise).
func (gc *Controller) deleteObject(ctx context.Context, id identity, policy metav1.DeletionPropagation, rv string) error {
	mapping, err := gc.mapping(id)
	if err != nil {
		return err
	}
	uid := id.UID
	pre := &metav1.Preconditions{UID: &uid}
	if rv != "" {
		pre.ResourceVersion = &rv
	}
	err = gc.meta.Resource(mapping.Resource).Namespace(id.Namespace).Delete(ctx, id.Name, metav1.DeleteOptions{
		Preconditions:     pre,
		PropagationPolicy: &policy,
	})
	switch {
	case rv != "" && apierrors.IsConflict(err):
		return errStale
	case err == nil:
		logr.FromContextOrDiscard(ctx).V(2).Info("Deleted dependent", "object", id.String(), "propagation", policy)
		return nil
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// Gone already, or replaced by another object of that name.
		return nil
	default:
		return fmt.Errorf("delete %s: %w", id, err)
	}
}

// unblockOwnerRefs clears blockOwnerDeletion on id's references to refs.
func (gc *Controller) unblockOwnerRefs(ctx context.Context, id identity, refs []metav1.OwnerReference) error {
	uids := map[types.UID]bool{}
	for _, r := range refs {
		uids[r.UID] = true
	}
	return gc.patch(ctx, id, func(m *metav1.ObjectMeta) bool {
		changed := false
		for i := range m.OwnerReferences {
			r := &m.OwnerReferences[i]
			if uids[r.UID] && r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion {
				f := false
				r.BlockOwnerDeletion = &f
				changed = true
			}
		}
		return changed
	}, false)
}

// patch applies mutate to id's latest metadata and writes the owner
// references (or, with finalizers, the finalizers) back with a merge patch
// guarded by resourceVersion, retrying on conflict. An object that is gone
// or replaced needs nothing.
func (gc *Controller) patch(ctx context.Context, id identity, mutate func(*metav1.ObjectMeta) bool, finalizers bool) error {
	mapping, err := gc.mapping(id)
	if err != nil {
		return err
	}
	client := gc.meta.Resource(mapping.Resource).Namespace(id.Namespace)
	err = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		latest, err := client.Get(ctx, id.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if latest.UID != id.UID || !mutate(&latest.ObjectMeta) {
			return nil
		}
		m := map[string]any{"resourceVersion": latest.ResourceVersion}
		if finalizers {
			m["finalizers"] = nonNil(latest.Finalizers)
		} else {
			m["ownerReferences"] = nonNil(latest.OwnerReferences)
		}
		data, err := json.Marshal(map[string]any{"metadata": m})
		if err != nil {
			return err
		}
		_, err = client.Patch(ctx, id.Name, types.MergePatchType, data, metav1.PatchOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("patch %s: %w", id, err)
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// warn records a Warning Event on id.
func (gc *Controller) warn(id identity, reason, msg string) {
	ref := &corev1.ObjectReference{APIVersion: id.APIVersion, Kind: id.Kind, Namespace: id.Namespace, Name: id.Name, UID: id.UID}
	gc.recorder.Event(ref, corev1.EventTypeWarning, reason, msg)
}

// absentCache remembers UIDs known not to exist, so that the owner of many
// dependents is looked up once. UIDs are never reused, so an entry never
// goes stale; the cache is only bounded.
type absentCache struct {
	mu   sync.Mutex
	max  int
	uids map[types.UID]struct{}
}

func newAbsentCache(max int) *absentCache {
	return &absentCache{max: max, uids: map[types.UID]struct{}{}}
}

func (c *absentCache) add(uid types.UID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.uids) >= c.max {
		clear(c.uids)
	}
	c.uids[uid] = struct{}{}
}

func (c *absentCache) has(uid types.UID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.uids[uid]
	return ok
}
