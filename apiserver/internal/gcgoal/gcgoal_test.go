package gcgoal

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name     string
		live     uint64
		headroom uint64
		want     int
	}{
		{name: "idle heap keeps the maximum", live: 80 * mib, headroom: 384 * mib, want: 200},
		{name: "headroom reached exactly at the maximum", live: 192 * mib, headroom: 384 * mib, want: 200},
		{name: "between the bounds", live: 256 * mib, headroom: 384 * mib, want: 150},
		{name: "large heap gets the minimum", live: 1024 * mib, headroom: 384 * mib, want: 100},
		{name: "nothing live yet", live: 0, headroom: 384 * mib, want: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Percent(tt.live, tt.headroom, 100, 200); got != tt.want {
				t.Errorf("Percent(%d MiB, %d MiB) = %d, want %d", tt.live/mib, tt.headroom/mib, got, tt.want)
			}
		})
	}
}

// TestBoundFollowsLiveHeap keeps a live heap larger than the headroom and
// checks that GOGC comes down to MinPercent after a collection, then goes
// back to the maximum once that heap is gone.
func TestBoundFollowsLiveHeap(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const headroom = 4 << 20
	done := make(chan struct{})
	go func() {
		defer close(done)
		Bound(ctx, logr.Discard(), headroom, 300, time.Millisecond)
	}()
	defer func() {
		cancel()
		<-done
	}()

	keep := make([]byte, 16*headroom)
	for i := range keep {
		keep[i] = byte(i)
	}
	waitPercent(t, MinPercent)
	runtime.KeepAlive(keep)
	keep = nil
	waitPercent(t, 300)
}

// waitPercent collects until GOGC is want, or fails after 10 s.
func waitPercent(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		got := int(readUint64("/gc/gogc:percent"))
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC = %d, want %d", got, want)
		}
	}
}
