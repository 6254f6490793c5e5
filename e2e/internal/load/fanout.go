package load

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// watchersPerConnection keeps each connection under the HTTP/2 stream limit
// servers commonly set (Go's default is 250 concurrent streams).
const watchersPerConnection = 100

// FanoutResult is the outcome of the many-watchers check.
type FanoutResult struct {
	Watchers    int
	Events      int           // events each watcher had to see
	Established time.Duration // until every watch request was answered
	Complete    int           // watchers that saw every event
	Delivered   int64         // events delivered, over all watchers
	Duplicates  int64         // events a watcher saw more than once
	Closed      int           // watches the server ended early
	Latency     Summary       // create start to receipt, over all receipts
	WatchErrors []string      // up to three distinct failures to start or keep a watch
}

// runFanout opens cfg.Watchers watches on one label selector from one
// resourceVersion, creates cfg.WatchEvents ConfigMaps that match, and checks
// that every watcher receives every one of them exactly once.
func (r *runner) runFanout(ctx context.Context) (FanoutResult, error) {
	res := FanoutResult{Watchers: r.cfg.Watchers, Events: r.cfg.WatchEvents}
	selector := fmt.Sprintf("%s=%s,%s=watch", runLabel, r.run, phaseLabel)
	writer := r.workers[0].kinds["configmaps"]
	list, err := r.workers[0].cs.CoreV1().ConfigMaps(r.ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return res, fmt.Errorf("list before watching: %w", err)
	}
	from := list.ResourceVersion

	conns := make([]kindClient, (r.cfg.Watchers+watchersPerConnection-1)/watchersPerConnection)
	for i := range conns {
		cs, err := r.connect()
		if err != nil {
			return res, err
		}
		if conns[i], err = newKindClient(cs, "configmaps", r.ns); err != nil {
			return res, err
		}
	}

	// created[i] is when the create of event i started, in UnixNano; set
	// before the request so a receipt can never precede it.
	created := make([]atomic.Int64, r.cfg.WatchEvents)
	// WatchTimeout bounds setting the watches up, and then again delivery
	// after the last create.
	watchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	setupTimer := time.AfterFunc(r.cfg.WatchTimeout, cancel)
	var (
		established, finished sync.WaitGroup
		latency               sharedSamples
		errMu                 sync.Mutex
		complete, closed      atomic.Int64
	)
	recordErr := func(err error) {
		errMu.Lock()
		defer errMu.Unlock()
		if len(res.WatchErrors) < maxKeptErrors {
			res.WatchErrors = append(res.WatchErrors, err.Error())
		}
	}
	start := time.Now()
	for i := range r.cfg.Watchers {
		established.Add(1)
		finished.Add(1)
		go func() {
			defer finished.Done()
			wi, err := conns[i/watchersPerConnection].watch(watchCtx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: from})
			established.Done()
			if err != nil {
				recordErr(fmt.Errorf("watch: %w", err))
				return
			}
			defer wi.Stop()
			w := fanoutWatcher{seen: make([]bool, r.cfg.WatchEvents), created: created}
			if w.consume(watchCtx, wi) {
				complete.Add(1)
			} else if w.closed {
				closed.Add(1)
			}
			atomic.AddInt64(&res.Delivered, int64(w.delivered))
			atomic.AddInt64(&res.Duplicates, int64(w.duplicates))
			latency.merge(&w.latency)
		}()
	}
	established.Wait()
	setupTimer.Stop()
	res.Established = time.Since(start)

	labels := map[string]string{runLabel: r.run, phaseLabel: "watch"}
	sendStart := time.Now()
	for i := range r.cfg.WatchEvents {
		created[i].Store(time.Now().UnixNano())
		if _, err := writer.create(ctx, fmt.Sprintf("watch-%d", i), labels); err != nil {
			return res, fmt.Errorf("create event %d: %w", i, err)
		}
	}
	deliveryTimer := time.AfterFunc(r.cfg.WatchTimeout, cancel)
	defer deliveryTimer.Stop()
	finished.Wait()
	res.Complete, res.Closed = int(complete.Load()), int(closed.Load())
	res.Latency = latency.s.Summarize(time.Since(sendStart))
	return res, ctx.Err()
}

// fanoutWatcher tallies what one watcher received.
type fanoutWatcher struct {
	seen       []bool
	created    []atomic.Int64
	delivered  int
	duplicates int
	closed     bool
	latency    Samples
}

// consume reads events until every one was seen (true), the watch ends, or
// ctx is done.
func (w *fanoutWatcher) consume(ctx context.Context, wi watch.Interface) bool {
	missing := len(w.seen)
	for missing > 0 {
		select {
		case ev, ok := <-wi.ResultChan():
			if !ok {
				w.closed = true
				return false
			}
			now := time.Now()
			m, isObj := ev.Object.(metav1.Object)
			if ev.Type != watch.Added || !isObj {
				continue
			}
			i, err := strconv.Atoi(strings.TrimPrefix(m.GetName(), "watch-"))
			if err != nil || i < 0 || i >= len(w.seen) {
				continue
			}
			w.delivered++
			if w.seen[i] {
				w.duplicates++
				continue
			}
			w.seen[i] = true
			missing--
			w.latency.Observe(now.Sub(time.Unix(0, w.created[i].Load())))
		case <-ctx.Done():
			return false
		}
	}
	return true
}
