package load

import (
	"math"
	"slices"
	"sync"
	"time"
)

// Samples collects the latencies and failures of one verb from one client.
// It is not safe for concurrent use: each client goroutine owns its own, and
// Merge combines them once the phase is over, so recording takes no lock.
type Samples struct {
	latencies []time.Duration
	errors    int
	firstErrs []string
}

// maxKeptErrors bounds how many distinct error messages a summary keeps: a
// few are enough to tell what went wrong.
const maxKeptErrors = 3

// Observe records one successful operation.
func (s *Samples) Observe(d time.Duration) { s.latencies = append(s.latencies, d) }

// Fail records one failed operation.
func (s *Samples) Fail(err error) {
	s.errors++
	if len(s.firstErrs) < maxKeptErrors && !slices.Contains(s.firstErrs, err.Error()) {
		s.firstErrs = append(s.firstErrs, err.Error())
	}
}

// Merge adds other's observations to s.
func (s *Samples) Merge(other *Samples) {
	s.latencies = append(s.latencies, other.latencies...)
	s.errors += other.errors
	for _, e := range other.firstErrs {
		if len(s.firstErrs) < maxKeptErrors && !slices.Contains(s.firstErrs, e) {
			s.firstErrs = append(s.firstErrs, e)
		}
	}
}

// Summary is the outcome of one verb over a phase.
type Summary struct {
	Ops        int           // successful operations
	Errors     int           // failed operations
	Elapsed    time.Duration // wall time of the phase
	Throughput float64       // successful operations per second of Elapsed
	P50, P99   time.Duration
	Max        time.Duration
	ErrorTexts []string // up to maxKeptErrors distinct error messages
	// ServerCPU is the CPU time the server process used during the phase,
	// when its PID is known; 0 otherwise.
	ServerCPU time.Duration
}

// Summarize computes a Summary for a phase that took elapsed. It sorts the
// samples in place.
func (s *Samples) Summarize(elapsed time.Duration) Summary {
	slices.Sort(s.latencies)
	sum := Summary{
		Ops:        len(s.latencies),
		Errors:     s.errors,
		Elapsed:    elapsed,
		P50:        Percentile(s.latencies, 50),
		P99:        Percentile(s.latencies, 99),
		ErrorTexts: s.firstErrs,
	}
	if n := len(s.latencies); n > 0 {
		sum.Max = s.latencies[n-1]
	}
	if elapsed > 0 {
		sum.Throughput = float64(sum.Ops) / elapsed.Seconds()
	}
	return sum
}

// Percentile returns the nearest-rank p-th percentile of sorted: the
// smallest sample that at least p percent of the samples do not exceed.
// It returns 0 for no samples.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// sharedSamples is Samples behind a lock, for the few places where many
// goroutines report into one place at a low rate (watch fan-out receipts are
// batched per watcher before they get here).
type sharedSamples struct {
	mu sync.Mutex
	s  Samples
}

func (s *sharedSamples) merge(other *Samples) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.s.Merge(other)
}
