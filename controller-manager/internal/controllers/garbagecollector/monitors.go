package garbagecollector

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"

	"trireme.dev/controller-manager/internal/worker"
)

// IgnoredResources are never watched nor collected, as upstream: Events
// are many, short-lived and never own anything.
var IgnoredResources = sets.New(
	schema.GroupResource{Resource: "events"},
	schema.GroupResource{Group: "events.k8s.io", Resource: "events"},
)

// monitor is the metadata informer of one resource.
type monitor struct {
	kind     schema.GroupVersionKind
	informer cache.SharedIndexInformer
	stop     chan struct{}
}

// DeletableResources returns every resource the apiserver serves that can
// be listed, watched and deleted, with its kind, in its preferred version.
// Groups that fail discovery (an aggregated API that is down) are left
// out rather than failing the whole discovery.
func DeletableResources(dc discovery.ServerResourcesInterface) (map[schema.GroupVersionResource]schema.GroupVersionKind, error) {
	lists, err := dc.ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("discover resources: %w", err)
	}
	lists = discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"delete", "list", "watch"}}, lists)
	out := map[schema.GroupVersionResource]schema.GroupVersionKind{}
	for _, l := range lists {
		gv, perr := schema.ParseGroupVersion(l.GroupVersion)
		if perr != nil {
			continue
		}
		for _, r := range l.APIResources {
			gvr := gv.WithResource(r.Name)
			if IgnoredResources.Has(gvr.GroupResource()) {
				continue
			}
			out[gvr] = gv.WithKind(r.Kind)
		}
	}
	return out, err
}

// resync discovers resources again: it refreshes the REST mapper, starts
// informers for new resources (custom resources installed since) and
// stops those of resources no longer served.
func (gc *Controller) resync(ctx context.Context) error {
	resources, derr := DeletableResources(gc.discovery)
	if resources == nil {
		return derr
	}
	groups, err := restmapper.GetAPIGroupResources(gc.discovery)
	if err != nil && len(groups) == 0 {
		return fmt.Errorf("discover groups: %w", err)
	}
	rm := restmapper.NewDiscoveryRESTMapper(groups)
	gc.mapper.Store(&rm)

	gc.monMu.Lock()
	defer gc.monMu.Unlock()
	added, removed := 0, 0
	for gvr, gvk := range resources {
		if _, ok := gc.monitors[gvr]; ok {
			continue
		}
		inf := metadatainformer.NewFilteredMetadataInformer(gc.meta, gvr, metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
		if _, err := inf.AddEventHandler(gc.handlerFor(gvk)); err != nil {
			return fmt.Errorf("watch %s: %w", gvr, err)
		}
		m := &monitor{kind: gvk, informer: inf, stop: make(chan struct{})}
		gc.monitors[gvr] = m
		go inf.Run(m.stop)
		added++
	}
	// A resource that failed discovery this time may only be unavailable
	// for a moment; keep its informer unless discovery fully succeeded.
	if derr == nil {
		for gvr, m := range gc.monitors {
			if _, ok := resources[gvr]; !ok {
				close(m.stop)
				delete(gc.monitors, gvr)
				removed++
			}
		}
	}
	if added > 0 || removed > 0 {
		logr.FromContextOrDiscard(ctx).Info("Garbage collector watches changed", "added", added, "removed", removed, "resources", len(gc.monitors))
	}
	return derr
}

// synced reports whether every informer has listed its resource once: the
// graph is complete only then, which orphaning and foreground deletion
// need.
func (gc *Controller) synced() bool {
	gc.monMu.Lock()
	defer gc.monMu.Unlock()
	for _, m := range gc.monitors {
		if !m.informer.HasSynced() {
			return false
		}
	}
	return true
}

// stopMonitors stops every informer.
func (gc *Controller) stopMonitors() {
	gc.monMu.Lock()
	defer gc.monMu.Unlock()
	for gvr, m := range gc.monitors {
		close(m.stop)
		delete(gc.monitors, gvr)
	}
}

// handlerFor turns one resource's informer events into graph events.
func (gc *Controller) handlerFor(gvk schema.GroupVersionKind) cache.ResourceEventHandler {
	apiVersion, kind := gvk.GroupVersion().String(), gvk.Kind
	toEvent := func(typ eventType, obj any) *event {
		m, ok := worker.ObjectAs[*metav1.PartialObjectMetadata](obj)
		if !ok {
			return nil
		}
		return &event{
			typ: typ,
			id: identity{APIVersion: apiVersion, Kind: kind, Namespace: m.Namespace,
				Name: m.Name, UID: m.UID},
			meta: &m.ObjectMeta,
		}
	}
	push := func(e *event) {
		if e != nil {
			gc.changes.Add(e)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { push(toEvent(addOrUpdate, obj)) },
		UpdateFunc: func(old, obj any) {
			o, ok1 := old.(*metav1.PartialObjectMetadata)
			n, ok2 := obj.(*metav1.PartialObjectMetadata)
			// Only owners, finalizers and deletion matter to the graph.
			if ok1 && ok2 && o.UID == n.UID && equalOwners(o.OwnerReferences, n.OwnerReferences) &&
				(o.DeletionTimestamp == nil) == (n.DeletionTimestamp == nil) &&
				sets.New(o.Finalizers...).Equal(sets.New(n.Finalizers...)) {
				return
			}
			push(toEvent(addOrUpdate, obj))
		},
		DeleteFunc: func(obj any) { push(toEvent(deleted, obj)) },
	}
}

func equalOwners(a, b []metav1.OwnerReference) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].UID != b[i].UID || !boolEq(a[i].BlockOwnerDeletion, b[i].BlockOwnerDeletion) {
			return false
		}
	}
	return true
}

func boolEq(a, b *bool) bool {
	return (a != nil && *a) == (b != nil && *b)
}

// minOnDemandResync spaces rediscoveries asked for by unknown kinds.
const minOnDemandResync = 2 * time.Second

// requestResync asks resyncLoop to rediscover soon.
func (gc *Controller) requestResync() {
	select {
	case gc.resyncNow <- struct{}{}:
	default:
	}
}

// resyncLoop rediscovers resources every period, and on request, until
// ctx ends.
func (gc *Controller) resyncLoop(ctx context.Context, period time.Duration) {
	log := logr.FromContextOrDiscard(ctx)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-gc.resyncNow:
			// An owner reference named a kind not discovered yet (a custom
			// resource just installed): look now rather than at the next tick,
			// but not more often than every few seconds.
			select {
			case <-ctx.Done():
				return
			case <-time.After(minOnDemandResync):
			}
		}
		if err := gc.resync(ctx); err != nil {
			log.Error(err, "Rediscovering resources for the garbage collector")
		}
	}
}
