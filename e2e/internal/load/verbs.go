package load

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// seedPerClient is how many objects each client creates, untimed, when a
// verb needs existing objects and the create verb was not run.
const seedPerClient = 5

// eventTimeout bounds the wait for one watch event in the watch verb.
const eventTimeout = 30 * time.Second

// worker is one client: its own connection, and the objects it created,
// which only it updates so updates never conflict with each other.
type worker struct {
	id    int
	cs    kubernetes.Interface
	kinds map[string]kindClient
	objs  map[string][]metav1.Object // latest known version, per kind
	seq   int                        // names of created objects
}

func (w *worker) labels(run string) map[string]string {
	return map[string]string{runLabel: run, clientLabel: strconv.Itoa(w.id)}
}

func (w *worker) nextName() string {
	w.seq++
	return fmt.Sprintf("load-%d-%d", w.id, w.seq)
}

// runVerb runs verb on kind with every client until the budget is spent.
func (r *runner) runVerb(ctx context.Context, verb, kind string) (Summary, error) {
	if verb != "create" {
		if err := r.seed(ctx, kind); err != nil {
			return Summary{}, err
		}
	}
	if verb == "list" && r.cfg.ListObjects > 0 {
		if err := r.resize(ctx, kind, r.cfg.ListObjects); err != nil {
			return Summary{}, err
		}
	}
	b := newBudget(r.cfg.Count, r.cfg.Duration)
	samples := make([]Samples, len(r.workers))
	var wg sync.WaitGroup
	cpu0 := r.serverCPU()
	start := time.Now()
	for i, w := range r.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.verbLoop(ctx, w, verb, kind, b, &samples[i])
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := r.serverCPU() - cpu0
	var total Samples
	for i := range samples {
		total.Merge(&samples[i])
	}
	sum := total.Summarize(elapsed)
	if cpu0 >= 0 && cpu >= 0 {
		sum.ServerCPU = cpu
	}
	return sum, ctx.Err()
}

// serverCPU is the server's CPU time so far, or -1 when it is not known.
func (r *runner) serverCPU() time.Duration {
	if r.cfg.ServerPID == 0 {
		return -1
	}
	d, err := ReadCPU(r.cfg.ServerPID)
	if err != nil {
		return -1
	}
	return d
}

func (r *runner) verbLoop(ctx context.Context, w *worker, verb, kind string, b *budget, s *Samples) {
	kc := w.kinds[kind]
	if verb == "watch" {
		r.watchLoop(ctx, w, kc, kind, b, s)
		return
	}
	for n := 0; ctx.Err() == nil && b.take(); n++ {
		objs := w.objs[kind]
		var i int
		if len(objs) > 0 {
			i = n % len(objs)
		}
		start := time.Now()
		var err error
		switch verb {
		case "create":
			var obj metav1.Object
			if obj, err = kc.create(ctx, w.nextName(), w.labels(r.run)); err == nil {
				w.objs[kind] = append(w.objs[kind], obj)
			}
		case "get":
			err = kc.get(ctx, objs[i].GetName())
		case "list":
			_, err = kc.list(ctx, metav1.ListOptions{Limit: r.cfg.ListLimit})
		case "update":
			var obj metav1.Object
			if obj, err = kc.update(ctx, objs[i], n); err == nil {
				objs[i] = obj
			}
		case "patch":
			var obj metav1.Object
			if obj, err = kc.patch(ctx, objs[i].GetName(), n); err == nil {
				objs[i] = obj
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.Fail(fmt.Errorf("%s %s: %w", verb, kind, err))
			continue
		}
		s.Observe(time.Since(start))
	}
}

// watchLoop measures how long a change takes to reach a watcher: the client
// watches its own objects, patches one, and times patch start to the event
// carrying the patch's resourceVersion.
func (r *runner) watchLoop(ctx context.Context, w *worker, kc kindClient, kind string, b *budget, s *Samples) {
	name := w.objs[kind][0].GetName()
	obj, err := kc.patch(ctx, name, 0)
	if err != nil {
		s.Fail(fmt.Errorf("watch %s: initial patch: %w", kind, err))
		return
	}
	opts := metav1.ListOptions{
		LabelSelector:   fmt.Sprintf("%s=%s,%s=%d", runLabel, r.run, clientLabel, w.id),
		ResourceVersion: obj.GetResourceVersion(),
	}
	wi, err := kc.watch(ctx, opts)
	if err != nil {
		s.Fail(fmt.Errorf("watch %s: %w", kind, err))
		return
	}
	defer func() { wi.Stop() }()
	for n := 1; ctx.Err() == nil && b.take(); n++ {
		start := time.Now()
		obj, err := kc.patch(ctx, name, n)
		if err != nil {
			if ctx.Err() == nil {
				s.Fail(fmt.Errorf("watch %s: patch: %w", kind, err))
			}
			continue
		}
		want := obj.GetResourceVersion()
		err = awaitEvent(ctx, wi, want)
		if err == nil {
			s.Observe(time.Since(start))
			continue
		}
		if ctx.Err() != nil {
			return
		}
		s.Fail(fmt.Errorf("watch %s: %w", kind, err))
		// Carry on from the patch just made on a fresh watch.
		wi.Stop()
		opts.ResourceVersion = want
		if wi, err = kc.watch(ctx, opts); err != nil {
			s.Fail(fmt.Errorf("watch %s: rewatch: %w", kind, err))
			return
		}
	}
}

// errWatchClosed reports a watch the server ended while events were awaited.
var errWatchClosed = errors.New("watch closed by server")

// awaitEvent reads wi until an object event with resourceVersion rv arrives.
func awaitEvent(ctx context.Context, wi watch.Interface, rv string) error {
	timer := time.NewTimer(eventTimeout)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return errWatchClosed
			}
			if ev.Type == watch.Error {
				return fmt.Errorf("watch error event: %v", ev.Object)
			}
			if m, ok := ev.Object.(metav1.Object); ok && m.GetResourceVersion() == rv {
				return nil
			}
		case <-timer.C:
			return fmt.Errorf("no event for resourceVersion %s within %s", rv, eventTimeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// resize creates or deletes objects of kind, untimed, until the workers
// hold n between them, each an even share. What a list costs grows with
// the objects it walks, and the verbs before it leave as many as the
// kind's create rate allowed: a slower kind would list fewer.
func (r *runner) resize(ctx context.Context, kind string, n int) error {
	total := 0
	for _, w := range r.workers {
		total += len(w.objs[kind])
	}
	if total == n {
		return nil
	}
	start := time.Now()
	g, ctx := errgroup.WithContext(ctx)
	for i, w := range r.workers {
		// Each worker ends with an even share of n; the remainder goes
		// to the first workers.
		want := n / len(r.workers)
		if i < n%len(r.workers) {
			want++
		}
		share := want - len(w.objs[kind])
		g.Go(func() error {
			kc := w.kinds[kind]
			for ; share > 0; share-- {
				obj, err := kc.create(ctx, w.nextName(), w.labels(r.run))
				if err != nil {
					return fmt.Errorf("create %s: %w", kind, err)
				}
				w.objs[kind] = append(w.objs[kind], obj)
			}
			for ; share < 0; share++ {
				last := len(w.objs[kind]) - 1
				if err := kc.delete(ctx, w.objs[kind][last].GetName()); err != nil {
					return fmt.Errorf("delete %s: %w", kind, err)
				}
				w.objs[kind] = w.objs[kind][:last]
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("resize %s to %d objects: %w", kind, n, err)
	}
	fmt.Fprintf(r.out, "  %s: %d objects for the list verb (from %d, untimed, %s)\n", kind, n, total, time.Since(start).Round(time.Millisecond))
	return nil
}

// seed gives every client objects of kind to work on if it has none.
func (r *runner) seed(ctx context.Context, kind string) error {
	var wg sync.WaitGroup
	errs := make([]error, len(r.workers))
	for i, w := range r.workers {
		if len(w.objs[kind]) > 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range seedPerClient {
				obj, err := w.kinds[kind].create(ctx, w.nextName(), w.labels(r.run))
				if err != nil {
					errs[i] = fmt.Errorf("seed %s: %w", kind, err)
					return
				}
				w.objs[kind] = append(w.objs[kind], obj)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
