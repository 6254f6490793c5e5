// Package gcgoal bounds the garbage collector's heap goal while keeping a
// high GOGC for small heaps.
//
// The server collects at GOGC=200 for throughput (see internal/app): the
// heap may grow to three times what the last collection found live. That
// costs little while the live heap is the idle server's 60-100 MiB, but
// load makes it large for a while: 100 clients listing pages of 500 custom
// resources hold some 450 MiB of responses in flight, and at GOGC=200 the
// heap then grew to 1.4 GiB, resident until the idle trimmer ran. Bound
// lowers GOGC as the live heap grows so that the heap may exceed it by at
// most a fixed headroom, but never below upstream's GOGC=100.
package gcgoal

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/go-logr/logr"
)

// Headroom is how far above the live heap the heap goal may be at most,
// unless MinPercent allows more. At GOGC=200 it is reached at a live heap
// of 192 MiB, more than a loaded server's heap outside bursts of large
// lists, so writes keep GOGC=200's throughput.
const Headroom = 384 << 20

// MinPercent is the lowest GOGC the bound sets: the runtime's and
// upstream kube-apiserver's default. Lower would spend much more CPU on
// collecting large heaps.
const MinPercent = 100

// Percent is the GOGC that gives a live heap of live bytes a heap goal at
// most headroom above it, between minPercent and maxPercent.
func Percent(live, headroom uint64, minPercent, maxPercent int) int {
	if live == 0 {
		return maxPercent
	}
	p := headroom * 100 / live
	switch {
	case p >= uint64(maxPercent):
		return maxPercent
	case p <= uint64(minPercent):
		return minPercent
	}
	return int(p)
}

// Interval is how often Bound looks for a finished collection. A loaded
// server collects a few times a second; a quarter second is soon enough
// and costs nothing measurable (one read of runtime metrics).
const Interval = 250 * time.Millisecond

// Bound sets GOGC, whenever a collection has finished, to Percent(live,
// headroom, MinPercent, maxPercent) of the live heap that collection
// found, until ctx ends; then it sets maxPercent again.
//
// It polls rather than hooking each collection with a cleanup: cleanups
// run late on a busy server, measured seconds and several collections
// behind, when the heap goal matters most.
func Bound(ctx context.Context, log logr.Logger, headroom uint64, maxPercent int, interval time.Duration) {
	debug.SetGCPercent(maxPercent)
	current, lastCycle := maxPercent, uint64(0)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			debug.SetGCPercent(maxPercent)
			return
		case <-t.C:
		}
		cycle := readUint64("/gc/cycles/total:gc-cycles")
		if cycle == lastCycle {
			continue
		}
		lastCycle = cycle
		if p := Percent(liveHeap(), headroom, MinPercent, maxPercent); p != current {
			debug.SetGCPercent(p)
			log.V(4).Info("Set the garbage collector's target", "percent", p)
			current = p
		}
	}
}

// liveHeap is the heap the last collection marked live.
func liveHeap() uint64 { return readUint64("/gc/heap/live:bytes") }

// readUint64 reads one runtime metric, 0 if the runtime has no such.
func readUint64(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
