package queue

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/utils/clock"

	"trireme.dev/scheduler/internal/framework"
)

// ErrClosed is returned by Pop once the queue is closed.
var ErrClosed = errors.New("scheduling queue is closed")

// How long a pod may sit in the unschedulable set before it is retried
// anyway, in case an event that would have helped it was missed.
const unschedulableTimeout = 5 * time.Minute

// Options configure a Queue.
type Options struct {
	// Less orders the active queue (the profiles' QueueSort plugin).
	Less fwk.LessFunc
	// InitialBackoff doubles on each attempt up to MaxBackoff.
	InitialBackoff, MaxBackoff time.Duration
	// PreEnqueue runs the pod's profile's PreEnqueue plugins; a failure
	// gates the pod.
	PreEnqueue func(ctx context.Context, pod *v1.Pod) *fwk.Status
	// Events are the cluster events each plugin registered.
	Events map[string][]fwk.ClusterEventWithHint
	Clock  clock.Clock
}

// Queue is the scheduling queue. Every method is safe for concurrent use.
type Queue struct {
	opts Options
	log  klog.Logger

	mu            sync.Mutex
	cond          *sync.Cond
	active        *keyedHeap[*framework.QueuedPodInfo]
	backoff       *keyedHeap[*framework.QueuedPodInfo]
	unschedulable map[string]*framework.QueuedPodInfo
	inFlight      map[types.UID]bool
	// A move request during a pod's cycle (moveCycle >= the pod's cycle)
	// sends the pod to back-off rather than the unschedulable set, so an
	// event that arrived while it was being scheduled is not lost.
	cycle, moveCycle int64
	closed           bool

	*Nominator
}

// New returns an empty queue.
func New(opts Options) *Queue {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	q := &Queue{
		opts:          opts,
		log:           klog.Background(),
		unschedulable: map[string]*framework.QueuedPodInfo{},
		inFlight:      map[types.UID]bool{},
		Nominator:     NewNominator(),
	}
	q.cond = sync.NewCond(&q.mu)
	q.active = newKeyedHeap(key, func(a, b *framework.QueuedPodInfo) bool { return opts.Less(a, b) })
	q.backoff = newKeyedHeap(key, func(a, b *framework.QueuedPodInfo) bool {
		return a.BackoffExpiration.Before(b.BackoffExpiration)
	})
	return q
}

func key(q *framework.QueuedPodInfo) string { return podKey(q.Pod) }

func podKey(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// Run moves pods whose back-off ended to the active queue, and long-stuck
// unschedulable pods back, until ctx ends; then it closes the queue.
func (q *Queue) Run(ctx context.Context) {
	q.log = klog.FromContext(ctx)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	slow := time.NewTicker(30 * time.Second)
	defer slow.Stop()
	for {
		select {
		case <-ctx.Done():
			q.Close()
			return
		case <-tick.C:
			q.flushBackoff()
		case <-slow.C:
			q.flushUnschedulable()
		}
	}
}

// Close wakes Pop callers with ErrClosed.
func (q *Queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

func (q *Queue) newInfo(pod *v1.Pod) *framework.QueuedPodInfo {
	return &framework.QueuedPodInfo{PodInfo: framework.NewPodInfo(pod), Timestamp: q.opts.Clock.Now()}
}

// Add queues a new pending pod.
func (q *Queue) Add(ctx context.Context, pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	qpi := q.newInfo(pod)
	q.toActiveOrGated(ctx, qpi)
}

// toActiveOrGated runs PreEnqueue: a pod that passes goes to the active
// queue, one that does not waits, gated, in the unschedulable set.
func (q *Queue) toActiveOrGated(ctx context.Context, qpi *framework.QueuedPodInfo) bool {
	if s := q.opts.PreEnqueue(ctx, qpi.Pod); !s.IsSuccess() {
		qpi.GatingPlugin = s.Plugin()
		q.unschedulable[key(qpi)] = qpi
		return false
	}
	qpi.GatingPlugin = ""
	delete(q.unschedulable, key(qpi))
	q.backoff.Delete(key(qpi))
	q.active.AddOrUpdate(qpi)
	q.cond.Broadcast()
	return true
}

// Pop blocks until a pod is active and returns it, counted as in flight
// until Done.
func (q *Queue) Pop(ctx context.Context) (*framework.QueuedPodInfo, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.active.Len() == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return nil, ErrClosed
	}
	qpi, _ := q.active.PopFirst()
	q.cycle++
	qpi.Attempts++
	if qpi.InitialAttemptTimestamp == nil {
		now := q.opts.Clock.Now()
		qpi.InitialAttemptTimestamp = &now
	}
	q.inFlight[qpi.Pod.UID] = true
	return qpi, nil
}

// Cycle returns the number of pods popped so far: the current scheduling
// cycle.
func (q *Queue) Cycle() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.cycle
}

// Done ends a pod's time in flight.
func (q *Queue) Done(uid types.UID) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.inFlight, uid)
}

// backoffDuration doubles InitialBackoff per attempt beyond the first, up
// to MaxBackoff.
func (q *Queue) backoffDuration(qpi *framework.QueuedPodInfo) time.Duration {
	d := q.opts.InitialBackoff
	for i := 1; i < qpi.Attempts; i++ {
		if d >= q.opts.MaxBackoff/2 {
			return q.opts.MaxBackoff
		}
		d *= 2
	}
	return min(d, q.opts.MaxBackoff)
}

// AddUnschedulableIfNotPresent requeues a pod whose attempt in cycle
// failed: to the unschedulable set when plugins rejected it, else (an
// error, or an event arrived meanwhile) to back-off.
func (q *Queue) AddUnschedulableIfNotPresent(qpi *framework.QueuedPodInfo, cycle int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.inFlight, qpi.Pod.UID)
	k := key(qpi)
	if _, ok := q.active.Get(k); ok {
		return
	}
	if _, ok := q.backoff.Get(k); ok {
		return
	}
	if _, ok := q.unschedulable[k]; ok {
		return
	}
	now := q.opts.Clock.Now()
	qpi.Timestamp = now
	qpi.BackoffExpiration = now.Add(q.backoffDuration(qpi))
	if len(qpi.UnschedulablePlugins) > 0 {
		qpi.UnschedulableCount++
		qpi.ConsecutiveErrorsCount = 0
	} else {
		qpi.ConsecutiveErrorsCount++
	}
	if len(qpi.UnschedulablePlugins) == 0 || q.moveCycle >= cycle {
		q.backoff.AddOrUpdate(qpi)
		return
	}
	q.unschedulable[k] = qpi
}

func (q *Queue) flushBackoff() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Clock.Now()
	for {
		qpi, ok := q.backoff.Peek()
		if !ok || qpi.BackoffExpiration.After(now) {
			return
		}
		q.backoff.PopFirst()
		q.active.AddOrUpdate(qpi)
		q.cond.Broadcast()
	}
}

func (q *Queue) flushUnschedulable() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Clock.Now()
	var stale []*framework.QueuedPodInfo
	for _, qpi := range q.unschedulable {
		if now.Sub(qpi.Timestamp) > unschedulableTimeout {
			stale = append(stale, qpi)
		}
	}
	for _, qpi := range stale {
		q.move(context.Background(), qpi)
	}
}

// move sends an unschedulable pod to back-off or, its back-off over, to
// the active queue; a gated pod runs PreEnqueue again first.
func (q *Queue) move(ctx context.Context, qpi *framework.QueuedPodInfo) {
	k := key(qpi)
	if qpi.GatingPlugin != "" {
		q.toActiveOrGated(ctx, qpi)
		return
	}
	delete(q.unschedulable, k)
	if qpi.BackoffExpiration.After(q.opts.Clock.Now()) {
		q.backoff.AddOrUpdate(qpi)
		return
	}
	q.active.AddOrUpdate(qpi)
	q.cond.Broadcast()
}

// Update records a change to a pending pod. A pod waiting as
// unschedulable whose spec changed is retried: the change may fix it.
func (q *Queue) Update(ctx context.Context, old, pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := podKey(pod)
	if qpi, ok := q.active.Get(k); ok {
		qpi.PodInfo.Update(pod)
		q.active.AddOrUpdate(qpi)
		return
	}
	if qpi, ok := q.backoff.Get(k); ok {
		qpi.PodInfo.Update(pod)
		q.backoff.AddOrUpdate(qpi)
		return
	}
	if qpi, ok := q.unschedulable[k]; ok {
		qpi.PodInfo.Update(pod)
		if specChanged(old, pod) {
			q.move(ctx, qpi)
		}
		return
	}
	if q.inFlight[pod.UID] {
		// The attempt under way will requeue it; make that go to back-off
		// so the change is considered soon.
		q.moveCycle = q.cycle
		return
	}
	q.toActiveOrGated(ctx, q.newInfo(pod))
}

// specChanged ignores status and bookkeeping changes.
func specChanged(old, pod *v1.Pod) bool {
	if old == nil {
		return true
	}
	return !reflect.DeepEqual(old.Spec, pod.Spec) || !reflect.DeepEqual(old.Labels, pod.Labels)
}

// Delete drops a pod from every queue.
func (q *Queue) Delete(pod *v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := podKey(pod)
	q.active.Delete(k)
	q.backoff.Delete(k)
	delete(q.unschedulable, k)
	q.Nominator.DeleteNominatedPodIfExists(pod)
}

// MoveAllToActiveOrBackoffQueue retries the unschedulable pods that a
// cluster event may help: those rejected by a plugin that registered the
// event (and whose queueing hint, if any, says Queue), and those that
// failed with an error.
func (q *Queue) MoveAllToActiveOrBackoffQueue(ctx context.Context, event fwk.ClusterEvent, old, obj any) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var moving []*framework.QueuedPodInfo
	for _, qpi := range q.unschedulable {
		if q.helps(qpi, event, old, obj) {
			moving = append(moving, qpi)
		}
	}
	for _, qpi := range moving {
		q.move(ctx, qpi)
	}
	if len(q.inFlight) > 0 {
		q.moveCycle = q.cycle
	}
}

func (q *Queue) helps(qpi *framework.QueuedPodInfo, event fwk.ClusterEvent, old, obj any) bool {
	var plugins sets.Set[string]
	if qpi.GatingPlugin != "" {
		plugins = sets.New(qpi.GatingPlugin)
	} else {
		plugins = qpi.UnschedulablePlugins.Union(qpi.PendingPlugins)
	}
	if event.Resource == fwk.WildCard && event.ActionType == fwk.All {
		return true
	}
	if plugins.Len() == 0 {
		return true
	}
	for name := range plugins {
		for _, reg := range q.opts.Events[name] {
			if !matches(reg.Event, event) {
				continue
			}
			if reg.QueueingHintFn == nil {
				return true
			}
			hint, err := reg.QueueingHintFn(q.log, qpi.Pod, old, obj)
			if err != nil || hint == fwk.Queue {
				return true
			}
		}
	}
	return false
}

// matches reports whether a registered event covers an event that
// happened.
func matches(reg, ev fwk.ClusterEvent) bool {
	if reg.Resource == fwk.WildCard {
		return reg.ActionType&ev.ActionType != 0
	}
	resourceOK := reg.Resource == ev.Resource ||
		(reg.Resource == fwk.Pod && (ev.Resource == fwk.AssignedPod || ev.Resource == fwk.UnscheduledPod))
	return resourceOK && reg.ActionType&ev.ActionType != 0
}

// Activate implements fwk.PodActivator: the named pods go to the active
// queue at once.
func (q *Queue) Activate(_ klog.Logger, pods map[string]*v1.Pod) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, p := range pods {
		k := podKey(p)
		if qpi, ok := q.unschedulable[k]; ok && qpi.GatingPlugin == "" {
			delete(q.unschedulable, k)
			q.active.AddOrUpdate(qpi)
		} else if qpi, ok := q.backoff.Delete(k); ok {
			q.active.AddOrUpdate(qpi)
		}
	}
	q.cond.Broadcast()
}

// Lengths counts the pods in each part of the queue, for metrics.
func (q *Queue) Lengths() (active, backoff, unschedulable, gated int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, qpi := range q.unschedulable {
		if qpi.GatingPlugin != "" {
			gated++
		} else {
			unschedulable++
		}
	}
	return q.active.Len(), q.backoff.Len(), unschedulable, gated
}

// Has reports whether the pod is anywhere in the queue, for tests.
func (q *Queue) Has(pod *v1.Pod) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := podKey(pod)
	if _, ok := q.active.Get(k); ok {
		return "active"
	}
	if _, ok := q.backoff.Get(k); ok {
		return "backoff"
	}
	if qpi, ok := q.unschedulable[k]; ok {
		if qpi.GatingPlugin != "" {
			return "gated"
		}
		return "unschedulable"
	}
	return ""
}
