package cluster

import (
	"context"
	"net/http"
	"sync"
	"time"

	"trireme.dev/e2e/internal/load"
)

// httpLoad sends requests from several clients in a loop until stopped,
// timing the answers and counting the failures.
type httpLoad struct {
	cancel context.CancelFunc
	done   chan struct{}
	start  time.Time
	mu     sync.Mutex
	all    load.Samples
}

// startLoad starts n clients asking url with c, each request expected to
// answer 200 with a body starting with want (expect), each client starting
// a request at most once every gap (0: one after the other).
func startLoad(c *http.Client, url, want string, n int, gap time.Duration) *httpLoad {
	ctx, cancel := context.WithCancel(context.Background())
	l := &httpLoad{cancel: cancel, done: make(chan struct{}), start: time.Now()}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine load.Samples
			for ctx.Err() == nil {
				start := time.Now()
				if err := expect(c, url, 200, want); err != nil {
					mine.Fail(err)
				} else {
					mine.Observe(time.Since(start))
				}
				if wait := gap - time.Since(start); wait > 0 {
					select {
					case <-ctx.Done():
					case <-time.After(wait):
					}
				}
			}
			l.mu.Lock()
			l.all.Merge(&mine)
			l.mu.Unlock()
		}()
	}
	go func() { wg.Wait(); close(l.done) }()
	return l
}

// stop ends the load and summarizes it: answers, failures (the first few
// messages kept), rate and latencies.
func (l *httpLoad) stop() load.Summary {
	l.cancel()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.all.Summarize(time.Since(l.start))
}
