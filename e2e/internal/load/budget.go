package load

import (
	"sync/atomic"
	"time"
)

// budget decides when a phase ends: after a fixed number of operations
// shared by all clients, or at a deadline.
type budget struct {
	deadline  time.Time    // zero when counting
	remaining atomic.Int64 // operations left when counting
	counted   bool
}

func newBudget(count int, d time.Duration) *budget {
	b := &budget{counted: count > 0}
	if b.counted {
		b.remaining.Store(int64(count))
	} else {
		b.deadline = time.Now().Add(d)
	}
	return b
}

// take claims one operation; false means the phase is over.
func (b *budget) take() bool {
	if b.counted {
		return b.remaining.Add(-1) >= 0
	}
	return time.Now().Before(b.deadline)
}
