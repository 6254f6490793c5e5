package faults

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"trireme.dev/componentbase/testwait"
)

// The load: writers, each writing every interval through the VIP. Each keeps
// objectsPerWriter ConfigMaps of its own and updates them in turn with an
// increasing value; every createEvery-th write creates a new one instead.
const (
	writers          = 4
	objectsPerWriter = 20
	createEvery      = 10
	interval         = 40 * time.Millisecond
	requestTimeout   = 2 * time.Second
	loadLabel        = "trireme.dev/faults-load"
)

// load is the running write load.
type load struct {
	namespace string
	ledger    *Ledger
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

// startLoad creates namespace and starts the writers there. Their client
// speaks HTTP/1.1, as kubectl's one-shot requests effectively do: a request
// that times out closes its connection and the next one dials the VIP
// afresh, so what is measured is the cluster, not how long an HTTP/2
// connection to a vanished node takes to be declared dead.
func startLoad(ctx context.Context, base *rest.Config, namespace string) (*load, error) {
	cfg := rest.CopyConfig(base)
	cfg.Timeout = requestTimeout
	cfg.QPS, cfg.Burst = 1000, 1000
	cfg.TLSClientConfig.NextProtos = []string{"http/1.1"}
	cfg.UserAgent = "e2e-faults-load"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	l := &load{namespace: namespace, ledger: NewLedger(), cancel: cancel}
	for w := range writers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.write(ctx, client, w)
		}()
	}
	return l, nil
}

// write is one writer: its objects are created first (retried until
// acknowledged, so that every later write is an update), then updated in
// turn until ctx ends.
func (l *load) write(ctx context.Context, c kubernetes.Interface, w int) {
	cms := c.CoreV1().ConfigMaps(l.namespace)
	object := func(name string, v int64) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{loadLabel: "true"}},
			Data: map[string]string{"value": strconv.FormatInt(v, 10)}}
	}
	var v int64
	for i := range objectsPerWriter {
		name := fmt.Sprintf("w%d-%d", w, i)
		for ctx.Err() == nil {
			v++
			start := time.Now()
			_, err := cms.Create(ctx, object(name, v), metav1.CreateOptions{})
			l.ledger.Record(name, v, start, time.Now(), err)
			if err == nil {
				break
			}
			time.Sleep(interval)
		}
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	updates := 0
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		v++
		start := time.Now()
		var name string
		var err error
		if n%createEvery == 0 {
			name = fmt.Sprintf("w%d-new-%d", w, v)
			_, err = cms.Create(ctx, object(name, v), metav1.CreateOptions{})
		} else {
			name = fmt.Sprintf("w%d-%d", w, updates%objectsPerWriter)
			updates++
			patch := fmt.Sprintf(`{"data":{"value":"%d"}}`, v)
			_, err = cms.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		}
		if ctx.Err() != nil {
			// Cut off by the stop, not by the cluster: its outcome is unknown.
			err = ctx.Err()
		}
		l.ledger.Record(name, v, start, time.Now(), err)
	}
}

// waitStarted waits until every writer's objects exist, so that every
// later write is an update or a creation of a new object.
func (l *load) waitStarted(t testing.TB) {
	t.Helper()
	testwait.ForTrue(t, time.Minute, "the load's objects created", func() bool {
		return l.ledger.Acknowledged() >= writers*objectsPerWriter
	})
}

// check stops the load and compares what it wrote with what the cluster
// holds: every acknowledged write must be there.
func (l *load) check(ctx context.Context, t *testing.T, c kubernetes.Interface) {
	t.Helper()
	l.stop()
	h, err := l.held(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	lost := l.ledger.Check(h)
	logf("%s: %d writes acknowledged in all, %d objects held, %d acknowledged writes lost", l.namespace, l.ledger.Acknowledged(), len(h), len(lost))
	for _, p := range lost {
		t.Error(p)
	}
}

// stop stops the writers and waits for them; a second stop does nothing.
func (l *load) stop() {
	l.cancel()
	l.wg.Wait()
}

// held lists the load's objects as the cluster holds them.
func (l *load) held(ctx context.Context, c kubernetes.Interface) (map[string]int64, error) {
	list, err := c.CoreV1().ConfigMaps(l.namespace).List(ctx, metav1.ListOptions{LabelSelector: loadLabel})
	if err != nil {
		return nil, fmt.Errorf("list the load's ConfigMaps: %w", err)
	}
	out := make(map[string]int64, len(list.Items))
	for _, cm := range list.Items {
		v, err := ParseValue(cm.Data["value"])
		if err != nil {
			return nil, fmt.Errorf("ConfigMap %s: %w", cm.Name, err)
		}
		out[cm.Name] = v
	}
	return out, nil
}
