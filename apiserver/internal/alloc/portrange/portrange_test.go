package portrange

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"

	"trireme.dev/api/scheme"
	"trireme.dev/apiserver/internal/etcd"
)

// etcdURL is the client URL of the embedded etcd the tests share.
var etcdURL string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("skipped with -short: the allocator's tests share an embedded etcd")
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "portrange-etcd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := etcd.Start(ctx, dir, zap.NewNop())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer e.Stop()
	etcdURL = e.ClientURL
	return m.Run()
}

var prefixes atomic.Int64

// newStorage returns RangeAllocation storage under a prefix of its own, so
// each test starts from an empty bitmap; pass the same prefix to share one.
func newStorage(t *testing.T, prefix string) storage.Interface {
	t.Helper()
	cfg := storagebackend.NewDefaultConfig(prefix, scheme.Codecs.LegacyCodec(corev1.SchemeGroupVersion))
	cfg.Transport.ServerList = []string{etcdURL}
	s, destroy, err := generic.NewRawStorage(cfg.ForResource(corev1.Resource("servicenodeportallocations")),
		func() runtime.Object { return &corev1.RangeAllocation{} }, nil, "/ranges")
	if err != nil {
		t.Fatalf("storage: %v", err)
	}
	t.Cleanup(destroy)
	return s
}

func newPrefix() string { return fmt.Sprintf("/test-%d", prefixes.Add(1)) }

func newAllocator(t *testing.T, r string) *Allocator {
	t.Helper()
	return New(mustRange(t, r), newStorage(t, newPrefix()))
}

func mustRange(t *testing.T, r string) net.PortRange {
	t.Helper()
	pr, err := net.ParsePortRange(r)
	if err != nil {
		t.Fatal(err)
	}
	return *pr
}

func used(t *testing.T, a *Allocator) []int {
	t.Helper()
	got, err := a.Used(context.Background())
	if err != nil {
		t.Fatalf("used: %v", err)
	}
	return got
}

// wantPortError checks err is a *PortError for want's slot with cause.
func wantPortError(t *testing.T, err error, index int, cause error) {
	t.Helper()
	var pe *PortError
	if !errors.As(err, &pe) || !errors.Is(err, cause) || pe.Index != index {
		t.Fatalf("error = %v, want a PortError at index %d wrapping %v", err, index, cause)
	}
}

func TestAllocate(t *testing.T) {
	ctx := context.Background()

	t.Run("requested ports are taken as asked", func(t *testing.T) {
		a := newAllocator(t, "30000-30009")
		got, err := a.Allocate(ctx, []int{30003, 30000, 30009}, false)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []int{30003, 30000, 30009}) {
			t.Errorf("allocated %v, want the requested ports in order", got)
		}
		if u := used(t, a); !slices.Equal(u, []int{30000, 30003, 30009}) {
			t.Errorf("used = %v", u)
		}
	})

	t.Run("ports left to the server avoid the static band until the rest is full", func(t *testing.T) {
		// 100 ports: the bottom 16 are the static band.
		a := newAllocator(t, "30000-30099")
		for i := range 84 {
			got, err := a.Allocate(ctx, []int{0}, false)
			if err != nil {
				t.Fatal(err)
			}
			if got[0] < 30016 {
				t.Fatalf("allocation %d took %d from the static band with the rest not full", i, got[0])
			}
		}
		got, err := a.Allocate(ctx, []int{0}, false)
		if err != nil || got[0] >= 30016 {
			t.Errorf("with the rest full: %v, %v; want a port of the static band", got, err)
		}
	})

	t.Run("any port comes from the range and is distinct", func(t *testing.T) {
		a := newAllocator(t, "30000-30004")
		got, err := a.Allocate(ctx, []int{0, 0, 0, 0, 0}, false)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if !slices.Equal(got, []int{30000, 30001, 30002, 30003, 30004}) {
			t.Errorf("allocated %v, want every port of the range once", got)
		}
	})

	t.Run("requested ports are taken before any port is chosen", func(t *testing.T) {
		a := newAllocator(t, "30000-30001")
		got, err := a.Allocate(ctx, []int{0, 30000}, false)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []int{30001, 30000}) {
			t.Errorf("allocated %v, want [30001 30000]", got)
		}
	})

	t.Run("a taken port is refused and nothing is taken", func(t *testing.T) {
		a := newAllocator(t, "30000-30009")
		if _, err := a.Allocate(ctx, []int{30005}, false); err != nil {
			t.Fatal(err)
		}
		_, err := a.Allocate(ctx, []int{30001, 0, 30005}, false)
		wantPortError(t, err, 2, ErrAllocated)
		if u := used(t, a); !slices.Equal(u, []int{30005}) {
			t.Errorf("used after a refused request = %v, want only [30005]", u)
		}
	})

	t.Run("a port asked twice in one request is refused", func(t *testing.T) {
		a := newAllocator(t, "30000-30009")
		_, err := a.Allocate(ctx, []int{30002, 30002}, false)
		wantPortError(t, err, 1, ErrAllocated)
		if u := used(t, a); len(u) != 0 {
			t.Errorf("used after a refused request = %v, want none", u)
		}
	})

	t.Run("a port outside the range is refused", func(t *testing.T) {
		a := newAllocator(t, "30000-30009")
		for _, p := range []int{29999, 30010, -1} {
			_, err := a.Allocate(ctx, []int{0, p}, false)
			wantPortError(t, err, 1, ErrNotInRange)
		}
	})

	t.Run("a full range is refused", func(t *testing.T) {
		a := newAllocator(t, "30000-30002")
		if _, err := a.Allocate(ctx, []int{0, 0, 0}, false); err != nil {
			t.Fatal(err)
		}
		_, err := a.Allocate(ctx, []int{0}, false)
		wantPortError(t, err, 0, ErrFull)
	})

	t.Run("dry run checks but writes nothing", func(t *testing.T) {
		a := newAllocator(t, "30000-30009")
		got, err := a.Allocate(ctx, []int{30004, 0}, true)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != 30004 || !a.r.Contains(got[1]) {
			t.Errorf("dry run answered %v", got)
		}
		if u := used(t, a); len(u) != 0 {
			t.Errorf("used after a dry run = %v, want none", u)
		}
		if _, err := a.Allocate(ctx, []int{30004}, false); err != nil {
			t.Fatal(err)
		}
		_, err = a.Allocate(ctx, []int{30004}, true)
		wantPortError(t, err, 0, ErrAllocated)
	})
}

func TestStaticBand(t *testing.T) {
	for _, tt := range []struct{ size, want int }{
		{5, 0}, {16, 0}, {17, 16}, {100, 16}, {2768, 86}, {10000, 128},
	} {
		if got := staticBand(tt.size); got != tt.want {
			t.Errorf("staticBand(%d) = %d, want %d", tt.size, got, tt.want)
		}
	}
}

func TestRelease(t *testing.T) {
	ctx := context.Background()

	t.Run("released ports can be taken again", func(t *testing.T) {
		a := newAllocator(t, "30000-30009")
		if _, err := a.Allocate(ctx, []int{30001, 30002}, false); err != nil {
			t.Fatal(err)
		}
		if err := a.Release(ctx, []int{30001}); err != nil {
			t.Fatal(err)
		}
		if u := used(t, a); !slices.Equal(u, []int{30002}) {
			t.Errorf("used after release = %v, want [30002]", u)
		}
		if _, err := a.Allocate(ctx, []int{30001}, false); err != nil {
			t.Errorf("allocate released port: %v", err)
		}
	})

	t.Run("releasing free or foreign ports is harmless", func(t *testing.T) {
		a := newAllocator(t, "30000-30009")
		if err := a.Release(ctx, []int{30003, 80, 40000}); err != nil {
			t.Fatal(err)
		}
		if u := used(t, a); len(u) != 0 {
			t.Errorf("used = %v, want none", u)
		}
	})
}

func TestReset(t *testing.T) {
	ctx := context.Background()
	a := newAllocator(t, "30000-30009")
	if _, err := a.Allocate(ctx, []int{30001, 30002}, false); err != nil {
		t.Fatal(err)
	}
	if err := a.Reset(ctx, []int{30007, 30008, 12}); err != nil {
		t.Fatal(err)
	}
	if u := used(t, a); !slices.Equal(u, []int{30007, 30008}) {
		t.Errorf("used after reset = %v, want exactly the in-range ports given", u)
	}
}

// TestSharedStorage runs two allocators on one bitmap, as two apiservers
// do: compare-and-swap keeps their ports distinct.
func TestSharedStorage(t *testing.T) {
	ctx := context.Background()
	prefix := newPrefix()
	r := mustRange(t, "30000-30039")
	allocators := []*Allocator{New(r, newStorage(t, prefix)), New(r, newStorage(t, prefix))}

	t.Run("concurrent allocations are distinct", func(t *testing.T) {
		const n = 40
		got := make([]int, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				ports, err := allocators[i%2].Allocate(ctx, []int{0}, false)
				errs[i] = err
				if err == nil {
					got[i] = ports[0]
				}
			})
		}
		wg.Wait()
		seen := map[int]bool{}
		for i, p := range got {
			if errs[i] != nil {
				t.Errorf("allocation %d: %v", i, errs[i])
				continue
			}
			if seen[p] {
				t.Errorf("port %d handed out twice", p)
			}
			seen[p] = true
		}
		_, err := allocators[0].Allocate(ctx, []int{0}, false)
		wantPortError(t, err, 0, ErrFull)
	})

	t.Run("a released port is seen by the other allocator", func(t *testing.T) {
		if err := allocators[0].Release(ctx, []int{30020}); err != nil {
			t.Fatal(err)
		}
		if _, err := allocators[1].Allocate(ctx, []int{30020}, false); err != nil {
			t.Errorf("other allocator cannot take released port: %v", err)
		}
	})
}

// TestRangeChange covers a restart with a different --service-node-port-range:
// the old bitmap means nothing under the new range.
func TestRangeChange(t *testing.T) {
	ctx := context.Background()
	prefix := newPrefix()
	old := New(mustRange(t, "30000-30009"), newStorage(t, prefix))
	if _, err := old.Allocate(ctx, []int{30005}, false); err != nil {
		t.Fatal(err)
	}
	moved := New(mustRange(t, "31000-31019"), newStorage(t, prefix))

	t.Run("used reports nothing from the old range", func(t *testing.T) {
		if u := used(t, moved); len(u) != 0 {
			t.Errorf("used under the new range = %v, want none (the bitmap was recorded for 30000-30009)", u)
		}
	})

	t.Run("allocation starts over", func(t *testing.T) {
		if _, err := moved.Allocate(ctx, []int{31005}, false); err != nil {
			t.Fatalf("allocate in the new range: %v", err)
		}
		if u := used(t, moved); !slices.Equal(u, []int{31005}) {
			t.Errorf("used = %v, want [31005]", u)
		}
	})
}

// TestConcurrentChanges covers changes committed together: each succeeds
// or fails on its own, as it would alone.
func TestConcurrentChanges(t *testing.T) {
	ctx := context.Background()
	a := newAllocator(t, "30000-30099")
	type call struct {
		want   int
		dryRun bool
		err    error
	}
	var calls []*call
	for p := 30010; p < 30030; p++ {
		calls = append(calls, &call{want: p})
	}
	for range 10 { // one port asked ten times: one gets it
		calls = append(calls, &call{want: 30050})
	}
	for p := 30060; p < 30070; p++ {
		calls = append(calls, &call{want: p, dryRun: true})
	}
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Go(func() { _, c.err = a.Allocate(ctx, []int{c.want}, c.dryRun) })
	}
	wg.Wait()
	winners := 0
	for _, c := range calls {
		switch {
		case c.want == 30050 && c.err == nil:
			winners++
		case c.want == 30050:
			wantPortError(t, c.err, 0, ErrAllocated)
		case c.err != nil:
			t.Errorf("port %d (dry run %t): %v", c.want, c.dryRun, c.err)
		}
	}
	if winners != 1 {
		t.Errorf("port 30050 taken by %d callers, want 1", winners)
	}
	var want []int
	for p := 30010; p < 30030; p++ {
		want = append(want, p)
	}
	want = append(want, 30050)
	if got := used(t, a); !slices.Equal(got, want) {
		t.Errorf("used = %v, want %v (no dry run written)", got, want)
	}
}
