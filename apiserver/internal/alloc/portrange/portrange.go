// Package portrange allocates Service NodePorts from a bitmap kept in one
// RangeAllocation object in etcd (/registry/ranges/servicenodeports, where
// upstream keeps it). Every change is a compare-and-swap on that object, so
// concurrent creates on any number of apiservers never share a port.
package portrange

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"

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

func (a *Allocator) update(ctx context.Context, dryRun bool, change func(*big.Int) error) error {
	err := a.store.GuaranteedUpdate(ctx, Key, &corev1.RangeAllocation{}, true, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			ra := in.(*corev1.RangeAllocation)
			if ra.Range != "" && ra.Range != a.r.String() {
				// The range changed across restarts: start over, the repair refills it.
				ra.Data = nil
			}
			bits := new(big.Int).SetBytes(ra.Data)
			if err := change(bits); err != nil {
				return nil, nil, err
			}
			if dryRun {
				return nil, nil, errDryRun
			}
			ra.Range = a.r.String()
			ra.Data = bits.Bytes()
			return ra, nil, nil
		}, nil)
	if errors.Is(err, errDryRun) {
		return nil
	}
	var pe *PortError
	if errors.As(err, &pe) {
		return pe
	}
	if err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("update node port allocations: %w", err)
	}
	return err
}

// errDryRun aborts the update after the checks ran.
var errDryRun = errors.New("dry run")
