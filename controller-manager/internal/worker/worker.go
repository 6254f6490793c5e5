// Package worker is the level-triggered loop every controller runs: event
// handlers add keys to a rate-limited work queue, workers take them one at a
// time and call the controller's sync function.
package worker

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"trireme.dev/controller-manager/internal/metrics"
)

// SyncFunc reconciles the object named by key (namespace/name, or name for
// cluster-scoped objects) with the state read from the informer caches.
// Returning nil forgets the key's failures; returning an error requeues it
// with exponential back-off. It must be safe to call again for the same key
// at any time: the loop is level-triggered, so a key says "look again", not
// what changed.
type SyncFunc func(ctx context.Context, key string) error

// Loop is one controller's queue and workers.
type Loop struct {
	name  string
	sync  SyncFunc
	queue workqueue.TypedRateLimitingInterface[string]
}

// New returns a loop named name (the controller name; it labels logs and
// metrics) that calls sync for every queued key.
func New(name string, sync SyncFunc) *Loop {
	return &Loop{
		name: name,
		sync: sync,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name, MetricsProvider: metrics.WorkqueueProvider()},
		),
	}
}

// Add queues key now.
func (l *Loop) Add(key string) { l.queue.Add(key) }

// Len is how many keys wait to be synced.
func (l *Loop) Len() int { return l.queue.Len() }

// AddAfter queues key once d has passed.
func (l *Loop) AddAfter(key string, d time.Duration) { l.queue.AddAfter(key, d) }

// AddObject queues the key of obj, a cache object or a tombstone.
func (l *Loop) AddObject(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("%s: key of %T: %w", l.name, obj, err))
		return
	}
	l.queue.Add(key)
}

// Run waits for synced, then runs workers goroutines until ctx ends, then
// shuts the queue down and waits for them to finish their current key.
func (l *Loop) Run(ctx context.Context, workers int, synced ...cache.InformerSynced) {
	defer l.queue.ShutDown()
	log := logr.FromContextOrDiscard(ctx).WithValues("controller", l.name)
	ctx = logr.NewContext(ctx, log)
	if !cache.WaitForNamedCacheSync(l.name, ctx.Done(), synced...) {
		return
	}
	log.Info("Starting workers", "workers", workers)
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			for l.processNext(ctx, log) {
			}
		})
	}
	<-ctx.Done()
	l.queue.ShutDown()
	wg.Wait()
	log.Info("Stopped workers")
}

func (l *Loop) processNext(ctx context.Context, log logr.Logger) bool {
	key, quit := l.queue.Get()
	if quit {
		return false
	}
	defer l.queue.Done(key)
	start := time.Now()
	err := l.sync(ctx, key)
	metrics.ObserveSync(l.name, time.Since(start), err)
	if err == nil {
		l.queue.Forget(key)
		return true
	}
	// The one place a sync error is logged: the sync functions only return it.
	log.Error(err, "Sync failed; will retry", "key", key, "retries", l.queue.NumRequeues(key))
	l.queue.AddRateLimited(key)
	return true
}

// ObjectAs returns the object an event handler was given as a T: a deletion
// the informer missed arrives wrapped in a tombstone, which this unwraps.
func ObjectAs[T any](obj any) (T, bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	t, ok := obj.(T)
	return t, ok
}
