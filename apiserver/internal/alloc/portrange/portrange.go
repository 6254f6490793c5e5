// Package portrange allocates Service NodePorts from a bitmap kept in one
// RangeAllocation object in etcd (/registry/ranges/servicenodeports, where
// upstream keeps it). Every change is a compare-and-swap on that object, so
// concurrent creates on any number of apiservers never share a port.
//
// Within one apiserver the changes that arrive while a write is under way
// are committed together, in one compare-and-swap: concurrent creates
// would otherwise race on the one object, each retrying on the others'
// conflicts, and NodePort and LoadBalancer Services were created eight
// times slower than ClusterIP ones.
package portrange

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apiserver/pkg/storage"
)

// Key is where the bitmap lives, below the storage prefix.
const Key = "/ranges/servicenodeports"

// ErrAllocated means a requested port is already taken.
var ErrAllocated = errors.New("provided port is already allocated")

// ErrNotInRange means a requested port is outside the range.
var ErrNotInRange = errors.New("provided port is not in the valid range")

// ErrFull means no port is left.
var ErrFull = errors.New("range is full")

// PortError says which of the requested ports failed.
type PortError struct {
	Index int
	Port  int
	Err   error
}

func (e *PortError) Error() string { return fmt.Sprintf("port %d: %v", e.Port, e.Err) }

func (e *PortError) Unwrap() error { return e.Err }

// Allocator hands out ports of one range.
type Allocator struct {
	r     net.PortRange
	store storage.Interface

	mu sync.Mutex
	// pending are the changes waiting for the next commit; committing is
	// true while a goroutine commits them.
	pending    []*change
	committing bool
	// last is the object as the last commit left it, the likely current
	// state: a commit tries it without reading first. Only the committing
	// goroutine uses it.
	last *corev1.RangeAllocation
}

// change is one caller's edit of the bitmap, with its outcome.
type change struct {
	edit   func(*big.Int) error
	dryRun bool
	err    error
	done   chan struct{}
}

// New returns an allocator of r backed by store.
func New(r net.PortRange, store storage.Interface) *Allocator {
	return &Allocator{r: r, store: store}
}

// Range returns the served range.
func (a *Allocator) Range() net.PortRange { return a.r }

// Allocate takes one port for each entry of want: the entry itself when
// non-zero, else any free port. It takes all or none.
func (a *Allocator) Allocate(ctx context.Context, want []int, dryRun bool) ([]int, error) {
	got := make([]int, len(want))
	for i, p := range want {
		if p != 0 && !a.r.Contains(p) {
			return nil, &PortError{Index: i, Port: p, Err: ErrNotInRange}
		}
	}
	err := a.update(ctx, dryRun, func(bits *big.Int) error {
		for i, p := range want {
			if p == 0 {
				continue
			}
			off := p - a.r.Base
			if bits.Bit(off) == 1 {
				return &PortError{Index: i, Port: p, Err: ErrAllocated}
			}
			bits.SetBit(bits, off, 1)
			got[i] = p
		}
		for i, p := range want {
			if p != 0 {
				continue
			}
			off, ok := a.free(bits)
			if !ok {
				return &PortError{Index: i, Err: ErrFull}
			}
			bits.SetBit(bits, off, 1)
			got[i] = a.r.Base + off
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return got, nil
}

// free finds a clear bit for a port the client left to the server. As
// upstream does, it takes one above the range's static band first, so that
// the ports users choose themselves (from the band's bottom) are seldom
// taken already; the band is used only once the rest is full.
func (a *Allocator) free(bits *big.Int) (int, bool) {
	band := staticBand(a.r.Size)
	if off, ok := freeIn(bits, band, a.r.Size); ok {
		return off, true
	}
	return freeIn(bits, 0, band)
}

// staticBand is the size of the bottom of a range of size ports that
// dynamic allocation avoids: size/32, at least 16 and at most 128, as
// upstream sizes it for node ports; none in ranges of 16 ports or fewer.
func staticBand(size int) int {
	if size <= 16 {
		return 0
	}
	return min(max(16, size/32), 128)
}

// freeIn finds a clear bit in [lo, hi), probing at random first so that
// concurrent allocators rarely collide on the same compare-and-swap.
func freeIn(bits *big.Int, lo, hi int) (int, bool) {
	n := hi - lo
	if n <= 0 {
		return 0, false
	}
	for i := 0; i < 32; i++ {
		off := lo + rand.IntN(n)
		if bits.Bit(off) == 0 {
			return off, true
		}
	}
	start := rand.IntN(n)
	for i := 0; i < n; i++ {
		off := lo + (start+i)%n
		if bits.Bit(off) == 0 {
			return off, true
		}
	}
	return 0, false
}

// Release frees ports; ports outside the range are ignored.
func (a *Allocator) Release(ctx context.Context, ports []int) error {
	return a.update(ctx, false, func(bits *big.Int) error {
		for _, p := range ports {
			if a.r.Contains(p) {
				bits.SetBit(bits, p-a.r.Base, 0)
			}
		}
		return nil
	})
}

// Reset replaces the bitmap with exactly ports, used by the repair that
// rebuilds it from the stored Services.
func (a *Allocator) Reset(ctx context.Context, ports []int) error {
	return a.update(ctx, false, func(bits *big.Int) error {
		bits.SetInt64(0)
		for _, p := range ports {
			if a.r.Contains(p) {
				bits.SetBit(bits, p-a.r.Base, 1)
			}
		}
		return nil
	})
}

// Used returns the allocated ports.
func (a *Allocator) Used(ctx context.Context) ([]int, error) {
	ra := &corev1.RangeAllocation{}
	if err := a.store.Get(ctx, Key, storage.GetOptions{IgnoreNotFound: true}, ra); err != nil {
		return nil, err
	}
	if ra.Range != "" && ra.Range != a.r.String() {
		// Recorded for another range: its bits mean other ports (see update).
		return nil, nil
	}
	bits := new(big.Int).SetBytes(ra.Data)
	var out []int
	for off := 0; off < a.r.Size; off++ {
		if bits.Bit(off) == 1 {
			out = append(out, a.r.Base+off)
		}
	}
	return out, nil
}

// update applies edit to the bitmap in the next commit and returns its
// outcome: edit's own error, or the storage's.
func (a *Allocator) update(ctx context.Context, dryRun bool, edit func(*big.Int) error) error {
	c := &change{edit: edit, dryRun: dryRun, done: make(chan struct{})}
	a.mu.Lock()
	a.pending = append(a.pending, c)
	if !a.committing {
		a.committing = true
		// The commit serves other callers too: it must not end with this
		// one's context.
		go a.commitPending(context.WithoutCancel(ctx))
	}
	a.mu.Unlock()
	<-c.done
	return c.err
}

// commitPending commits the pending changes, batch after batch, until none
// is left.
func (a *Allocator) commitPending(ctx context.Context) {
	a.mu.Lock()
	for len(a.pending) > 0 {
		batch := a.pending
		a.pending = nil
		a.mu.Unlock()
		a.commit(ctx, batch)
		for _, c := range batch {
			close(c.done)
		}
		a.mu.Lock()
	}
	a.committing = false
	a.mu.Unlock()
}

// commit writes batch in one compare-and-swap. Each change is tried on
// what the ones before it left; one that fails, or a dry run, leaves the
// bitmap as it was. On a conflict the storage calls the function again
// with the current object, and every change is tried anew.
func (a *Allocator) commit(ctx context.Context, batch []*change) {
	out := &corev1.RangeAllocation{}
	var cached runtime.Object
	if a.last != nil {
		cached = a.last
	}
	err := a.store.GuaranteedUpdate(ctx, Key, out, true, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			ra := in.(*corev1.RangeAllocation)
			if ra.Range != "" && ra.Range != a.r.String() {
				// The range changed across restarts: start over, the repair refills it.
				ra.Data = nil
			}
			bits := new(big.Int).SetBytes(ra.Data)
			changed := false
			for _, c := range batch {
				next := new(big.Int).Set(bits)
				if c.err = c.edit(next); c.err != nil || c.dryRun {
					continue
				}
				bits, changed = next, true
			}
			if !changed {
				return nil, nil, errUnchanged
			}
			ra.Range = a.r.String()
			ra.Data = bits.Bytes()
			return ra, nil, nil
		}, cached)
	switch {
	case err == nil:
		a.last = out
		return
	case errors.Is(err, errUnchanged):
		return
	case !apierrors.IsConflict(err):
		err = fmt.Errorf("update node port allocations: %w", err)
	}
	a.last = nil
	for _, c := range batch {
		if c.err == nil {
			c.err = err
		}
	}
}

// errUnchanged ends a commit in which no change was written: each failed
// or was a dry run.
var errUnchanged = errors.New("unchanged")
