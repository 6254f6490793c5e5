package load

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
)

// fakeRunner returns a runner whose clients all share one fake clientset, so
// the verb loops and the fan-out bookkeeping can be checked without a
// server. Timings from a fake mean nothing and are not checked.
func fakeRunner(t *testing.T, cfg Config) (*runner, *fake.Clientset) {
	t.Helper()
	cs := fake.NewClientset()
	r := newRunner(cfg, func() (kubernetes.Interface, error) { return cs, nil }, io.Discard)
	if err := r.connectWorkers([]string{"configmaps", "pods"}); err != nil {
		t.Fatal(err)
	}
	return r, cs
}

func TestRunVerbCounts(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Count, cfg.ListObjects = 4, 40, 0
	r, cs := fakeRunner(t, cfg)
	ctx := context.Background()
	for _, verb := range []string{"create", "get", "list", "update", "patch"} {
		t.Run(verb, func(t *testing.T) {
			sum, err := r.runVerb(ctx, verb, "configmaps")
			if err != nil {
				t.Fatal(err)
			}
			if sum.Ops != cfg.Count || sum.Errors != 0 {
				t.Fatalf("%s: %d ops, %d errors (%v), want %d ops and none", verb, sum.Ops, sum.Errors, sum.ErrorTexts, cfg.Count)
			}
		})
	}
	list, err := cs.CoreV1().ConfigMaps(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != cfg.Count {
		t.Fatalf("%d ConfigMaps exist after %d creates", len(list.Items), cfg.Count)
	}
	for _, cm := range list.Items {
		if cm.Labels[runLabel] != r.run || cm.Labels[clientLabel] == "" {
			t.Fatalf("ConfigMap %s lacks the run's labels: %v", cm.Name, cm.Labels)
		}
	}
}

// TestResize grows and shrinks a kind to the counts the list verb asks for,
// across workers holding uneven shares.
func TestResize(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Count = 3, 10
	r, cs := fakeRunner(t, cfg)
	ctx := context.Background()
	if _, err := r.runVerb(ctx, "create", "configmaps"); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{23, 23, 5, 0, 7} {
		if err := r.resize(ctx, "configmaps", n); err != nil {
			t.Fatalf("resize to %d: %v", n, err)
		}
		list, err := cs.CoreV1().ConfigMaps(r.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		held := 0
		for _, w := range r.workers {
			held += len(w.objs["configmaps"])
		}
		if len(list.Items) != n || held != n {
			t.Fatalf("resize to %d: %d ConfigMaps exist, workers hold %d", n, len(list.Items), held)
		}
	}
}

func TestRunVerbSeedsWithoutCreate(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Count = 3, 9
	r, cs := fakeRunner(t, cfg)
	sum, err := r.runVerb(context.Background(), "get", "pods")
	if err != nil {
		t.Fatal(err)
	}
	if sum.Ops != 9 || sum.Errors != 0 {
		t.Fatalf("get: %d ops, %d errors (%v), want 9 and none", sum.Ops, sum.Errors, sum.ErrorTexts)
	}
	pods, err := cs.CoreV1().Pods(r.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := cfg.Clients * seedPerClient; len(pods.Items) != want {
		t.Fatalf("%d pods seeded, want %d", len(pods.Items), want)
	}
}

func TestFanoutEveryWatcherSeesEveryEvent(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Clients, cfg.Watchers, cfg.WatchEvents, cfg.WatchTimeout = 1, 25, 40, 10*time.Second
	r, _ := fakeRunner(t, cfg)
	res, err := r.runFanout(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := FanoutResult{Watchers: 25, Events: 40, Complete: 25, Delivered: 25 * 40}
	if res.Watchers != want.Watchers || res.Events != want.Events || res.Complete != want.Complete ||
		res.Delivered != want.Delivered || res.Duplicates != 0 || res.Closed != 0 || len(res.WatchErrors) != 0 {
		t.Fatalf("runFanout() = %+v, want %+v", res, want)
	}
	if res.Latency.Ops != 25*40 {
		t.Fatalf("%d latency samples, want one per receipt (%d)", res.Latency.Ops, 25*40)
	}
}

func TestFanoutWatcherBookkeeping(t *testing.T) {
	tests := []struct {
		name         string
		names        []string
		wantComplete bool
		wantDup      int
		wantClosed   bool
	}{
		{name: "all events once", names: []string{"watch-0", "watch-1", "watch-2"}, wantComplete: true},
		{name: "duplicate counted, not completing", names: []string{"watch-0", "watch-0", "watch-1"}, wantDup: 1, wantClosed: true},
		{name: "foreign names ignored", names: []string{"other", "watch-9", "watch-0", "watch-1", "watch-2"}, wantComplete: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fw := watch.NewFakeWithChanSize(len(tt.names), false)
			for _, n := range tt.names {
				fw.Add(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n}})
			}
			fw.Stop()
			w := fanoutWatcher{seen: make([]bool, 3), created: make([]atomic.Int64, 3)}
			got := w.consume(context.Background(), fw)
			if got != tt.wantComplete || w.duplicates != tt.wantDup || w.closed != tt.wantClosed {
				t.Fatalf("consume() = %v, duplicates %d, closed %v; want %v, %d, %v", got, w.duplicates, w.closed, tt.wantComplete, tt.wantDup, tt.wantClosed)
			}
		})
	}
}
