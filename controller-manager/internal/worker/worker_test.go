package worker

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestRetriesFailedKeysUntilTheySucceed(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{}
	succeeded := make(chan string, 10)
	l := New("test-retry", func(_ context.Context, key string) error {
		mu.Lock()
		defer mu.Unlock()
		calls[key]++
		if key == "flaky" && calls[key] < 3 {
			return errors.New("not yet")
		}
		succeeded <- key
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go l.Run(ctx, 2)
	l.Add("flaky")
	l.Add("steady")
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case k := <-succeeded:
			got[k] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("succeeded: %v", got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if calls["flaky"] != 3 || calls["steady"] != 1 {
		t.Errorf("calls = %v, want flaky 3 and steady 1", calls)
	}
}

func TestAddObjectKeys(t *testing.T) {
	tests := []struct {
		name string
		obj  any
		want string
	}{
		{"namespaced", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}, "ns/p"},
		{"cluster scoped", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, "ns"},
		{"tombstone", cache.DeletedFinalStateUnknown{Key: "ns/gone"}, "ns/gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := New("test-keys", func(context.Context, string) error { return nil })
			l.AddObject(tt.obj)
			key, _ := l.queue.Get()
			if key != tt.want {
				t.Errorf("key = %q, want %q", key, tt.want)
			}
		})
	}
}

func TestRunStopsWhenContextEnds(t *testing.T) {
	l := New("test-stop", func(context.Context, string) error { return nil })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		l.Run(ctx, 3)
		close(done)
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
}
