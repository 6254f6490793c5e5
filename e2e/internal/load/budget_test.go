package load

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestBudgetCountIsSharedExactly(t *testing.T) {
	b := newBudget(1000, 0)
	var taken atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b.take() {
				taken.Add(1)
			}
		}()
	}
	wg.Wait()
	if got := taken.Load(); got != 1000 {
		t.Fatalf("clients took %d operations, want 1000", got)
	}
}

func TestBudgetDeadline(t *testing.T) {
	b := newBudget(0, 50*time.Millisecond)
	if !b.take() {
		t.Fatal("take() = false before the deadline")
	}
	time.Sleep(60 * time.Millisecond)
	if b.take() {
		t.Fatal("take() = true after the deadline")
	}
}
