// Package memtrim keeps an idle component's resident memory near what it
// really uses: while the component is idle, it returns freed heap and unmaps
// the pages of the executable that it no longer runs (start-up's, at first).
//
// Both matter for Trireme's control plane and addons. Start-up runs the
// init code of every API group and builds schemes, informers and (in the
// apiserver) every served group's OpenAPI, touching tens of megabytes of a
// large executable once; those clean file pages count as resident until
// memory pressure arrives. And the runtime's scavenger keeps freed heap up to the heap goal
// (three times the live heap in an apiserver tuned to GOGC=200), so an idle
// process would hold that much as well.
package memtrim

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
)

// IdleInterval is how often the trimmer looks at the allocation rate, and
// IdleAllocations the most a component may allocate in one interval and
// still count as idle. A bare apiserver allocates about 25 MiB a minute,
// which at GOGC=200 the collector would let pile up for minutes; a quiet
// cluster's leases, node status and watches add some; a component under
// load allocates hundreds of MiB a second, and collections then happen on
// their own. The trimmer's collection every 30 s of an idle ~70 MiB live
// heap costs a fraction of a percent of a core.
const (
	IdleInterval    = 30 * time.Second
	IdleAllocations = 128 << 20
)

// RunIdleTrimmer returns freed heap to the kernel every interval in which
// the process allocated less than idle bytes, until ctx ends. Under load it
// does nothing: the collector runs often enough then, and forcing it would
// cost throughput.
//
// Pages shared with another process (a second one run from the same file)
// stay resident.
//
// The first time the process is idle, start-up is over, and the trimmer
// also pages out the executable's read-only mappings: what only
// initialisation used leaves memory. In every idle interval after that it
// unmaps them again, leaving them in the page cache: the code a periodic
// task runs (a scrape, a lease renewal, a resync) comes back with its next
// minor fault, and what was used once since the last look does not stay
// counted. metrics-server, idle on three nodes, touches about a third of
// its resident executable in 30 s.
func RunIdleTrimmer(ctx context.Context, log logr.Logger, interval time.Duration, idle uint64) {
	t := time.NewTicker(interval)
	defer t.Stop()
	prev := allocatedBytes()
	pagedOut := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cur := allocatedBytes()
		if isIdle(prev, cur, idle) {
			debug.FreeOSMemory()
			if n, err := trimExecutable(!pagedOut); err != nil {
				// Nothing breaks: the pages stay mapped.
				log.V(2).Info("Could not trim the executable's pages", "err", err)
			} else if !pagedOut {
				log.V(2).Info("Paged out the executable's start-up pages", "mappings", n)
			}
			pagedOut = true
			// FreeOSMemory's own collection allocates little; start
			// the next interval after it.
			cur = allocatedBytes()
		}
		prev = cur
	}
}

// isIdle says whether allocating from prev to cur bytes in one interval is
// idle.
func isIdle(prev, cur, idle uint64) bool {
	return cur >= prev && cur-prev < idle
}

// allocatedBytes is the heap allocated since the process started.
func allocatedBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// mapping is an address range of /proc/self/maps.
type mapping struct{ start, end uintptr }

// trimExecutable unmaps the executable's read-only mappings (text and
// rodata), after asking the kernel to reclaim their pages when pageOut is
// set. They are clean file pages, so nothing is written; the kernel would
// drop them under memory pressure anyway, but until then they count as
// resident.
//
// MADV_PAGEOUT drops the pages from the page cache too, but the kernel only
// honours it for a process that owns the file or may write it (it ignores
// it, without an error, for a container that runs as nobody from a
// root-owned binary); and what it dropped, the next use reads from disk,
// which is why only the first trim asks for it. MADV_DONTNEED only unmaps,
// so the pages stay cached for the next fault, and needs no such right.
// Both mappings are private and read-only, so nothing the process wrote can
// be lost. On kernels that map a whole fault-around window or large folio at
// a fault, start-up leaves most of the executable mapped.
func trimExecutable(pageOut bool) (int, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, fmt.Errorf("find executable: %w", err)
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, fmt.Errorf("read mappings: %w", err)
	}
	defer f.Close()
	maps, err := readOnlyMappings(f, exe)
	if err != nil {
		return 0, err
	}
	for _, m := range maps {
		// Kernels before 5.4 have no MADV_PAGEOUT (EINVAL); unmapping
		// still helps there.
		if pageOut {
			if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_PAGEOUT); errno != 0 && errno != unix.EINVAL {
				return 0, fmt.Errorf("page out %#x-%#x: %w", m.start, m.end, errno)
			}
		}
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, unix.MADV_DONTNEED); errno != 0 {
			return 0, fmt.Errorf("unmap %#x-%#x: %w", m.start, m.end, errno)
		}
	}
	return len(maps), nil
}

// readOnlyMappings returns the mappings of path in a /proc/<pid>/maps
// listing that are not writable: writable ones hold data the process may
// have changed.
func readOnlyMappings(r io.Reader, path string) ([]mapping, error) {
	var out []mapping
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		// address perms offset dev inode pathname
		f := strings.Fields(sc.Text())
		if len(f) < 6 || strings.Join(f[5:], " ") != path || len(f[1]) < 2 || f[1][1] == 'w' {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			return nil, fmt.Errorf("unexpected mapping %q", sc.Text())
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			return nil, fmt.Errorf("unexpected mapping %q", sc.Text())
		}
		out = append(out, mapping{start: uintptr(start), end: uintptr(end)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read mappings: %w", err)
	}
	return out, nil
}
