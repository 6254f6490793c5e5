package vip

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	componentbaseconfig "k8s.io/component-base/config/v1alpha1"

	"trireme.dev/componentbase/testwait"
)

// fakeNetwork records which addresses are on which interface.
type fakeNetwork struct {
	mu        sync.Mutex
	addrs     map[string]bool
	announced int
	// events, when set, records "<name> add" and "<name> delete" in the
	// order they happen across networks.
	name   string
	events *eventLog
}

// eventLog is the order of what happened on several fake networks.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(e string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.events, ", ")
}

func (f *fakeNetwork) Add(iface string, ip net.IP) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.addrs[iface+"/"+ip.String()] = true
	f.events.add(f.name + " add")
	return nil
}

func (f *fakeNetwork) Delete(iface string, ip net.IP) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.addrs[iface+"/"+ip.String()] {
		f.events.add(f.name + " delete")
	}
	delete(f.addrs, iface+"/"+ip.String())
	return nil
}

func (f *fakeNetwork) Announce(string, net.IP) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.announced++
	return nil
}

func (f *fakeNetwork) has(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addrs[key]
}

// testLease is a quick election; whole seconds for the duration, which the
// Lease stores in seconds.
func testLease() componentbaseconfig.LeaderElectionConfiguration {
	le := DefaultLease()
	le.LeaseDuration.Duration = 2 * time.Second
	le.RenewDeadline.Duration = 1500 * time.Millisecond
	le.RetryPeriod.Duration = 200 * time.Millisecond
	return le
}

// TestFailover: of two managers sharing a Lease only the holder has the
// address; when it stops it removes the address and releases the Lease, and
// the other takes both over.
func TestFailover(t *testing.T) {
	// Whole seconds: the Lease stores its duration in seconds.
	c := fake.NewClientset()
	vip := net.ParseIP("10.0.0.100").To4()
	cfg := func(id string) Config {
		return Config{VIP: vip, Interface: "eth0", Identity: id, Lease: testLease(), Announcements: 2}
	}
	netA := &fakeNetwork{addrs: map[string]bool{"eth0/10.0.0.100": true}} // stale, from a killed run
	netB := &fakeNetwork{addrs: map[string]bool{}}
	ctxA, stopA := context.WithCancel(context.Background())
	doneA := make(chan struct{})
	go func() { _ = New(cfg("a"), c, netA, logr.Discard()).Run(ctxA); close(doneA) }()
	testwait.ForTrue(t, 10*time.Second, "a to hold the lease", func() bool {
		l, err := c.CoordinationV1().Leases("kube-system").Get(context.Background(), DefaultLeaseName, metav1.GetOptions{})
		return err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == "a"
	})
	testwait.ForTrue(t, 10*time.Second, "a to hold the address", func() bool { return netA.has("eth0/10.0.0.100") })
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	go func() { _ = New(cfg("b"), c, netB, logr.Discard()).Run(ctxB) }()
	time.Sleep(time.Second)
	if netB.has("eth0/10.0.0.100") {
		t.Fatal("b holds the address while a holds the lease")
	}
	stopA()
	<-doneA
	if netA.has("eth0/10.0.0.100") {
		t.Error("a kept the address after it stopped")
	}
	testwait.ForTrue(t, 10*time.Second, "b to take the address over", func() bool { return netB.has("eth0/10.0.0.100") })
	testwait.ForTrue(t, 10*time.Second, "b to announce it", func() bool {
		netB.mu.Lock()
		defer netB.mu.Unlock()
		return netB.announced > 0
	})
}

// TestHandOverOnShutdown: a holder whose apiserver starts shutting down
// hands the Lease over at once, without the others waiting it out, keeps
// the address until the next holder has taken it, and does not stand again
// until its apiserver serves.
func TestHandOverOnShutdown(t *testing.T) {
	c := fake.NewClientset()
	vip := net.ParseIP("10.0.0.100").To4()
	events := &eventLog{}
	var aDown atomic.Bool
	cfgA := Config{VIP: vip, Interface: "eth0", Identity: "a", Lease: testLease(), Announcements: 1,
		ShuttingDown: func(context.Context) (bool, error) { return aDown.Load(), nil }}
	cfgB := cfgA
	cfgB.Identity, cfgB.ShuttingDown = "b", nil
	// a's Lease lasts far longer than the test: only a release lets b in.
	cfgA.Lease.LeaseDuration.Duration = time.Hour
	netA := &fakeNetwork{addrs: map[string]bool{}, name: "a", events: events}
	netB := &fakeNetwork{addrs: map[string]bool{}, name: "b", events: events}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	holder := func() string {
		l, err := c.CoordinationV1().Leases("kube-system").Get(context.Background(), DefaultLeaseName, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	wg.Add(1)
	go func() { defer wg.Done(); _ = New(cfgA, c, netA, logr.Discard()).Run(ctx) }()
	testwait.ForTrue(t, 10*time.Second, "a to hold the address", func() bool { return netA.has("eth0/10.0.0.100") })
	wg.Add(1)
	go func() { defer wg.Done(); _ = New(cfgB, c, netB, logr.Discard()).Run(ctx) }()

	aDown.Store(true)
	testwait.ForTrue(t, 10*time.Second, "b to take the address over", func() bool { return netB.has("eth0/10.0.0.100") })
	testwait.ForTrue(t, 10*time.Second, "a to let the address go", func() bool { return !netA.has("eth0/10.0.0.100") })
	if got, want := events.String(), "a add, b add, a delete"; got != want {
		t.Errorf("events %q, want %q: the address must be on some node throughout", got, want)
	}
	// a's apiserver still says it is shutting down: a must not stand.
	time.Sleep(4 * cfgA.Lease.RetryPeriod.Duration)
	if h := holder(); h != "b" {
		t.Fatalf("the Lease is held by %q, want b", h)
	}
	aDown.Store(false)
	time.Sleep(4 * cfgA.Lease.RetryPeriod.Duration)
	if h := holder(); h != "b" || netA.has("eth0/10.0.0.100") {
		t.Errorf("a took the Lease (%q) or the address back from a live holder", h)
	}
}

func TestGratuitousARP(t *testing.T) {
	mac := net.HardwareAddr{2, 0, 0, 0, 0, 1}
	f, err := GratuitousARP(mac, net.ParseIP("10.213.7.100"))
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06,
		0, 1, 0x08, 0x00, 6, 4, 0, 1,
		2, 0, 0, 0, 0, 1, 10, 213, 7, 100,
		0, 0, 0, 0, 0, 0, 10, 213, 7, 100,
	}
	if !bytes.Equal(f, want) {
		t.Errorf("frame\n%x\nwant\n%x", f, want)
	}
	if _, err := GratuitousARP(mac, net.ParseIP("::1")); err == nil {
		t.Error("IPv6 accepted")
	}
}

// TestHealthAndMetrics: the metrics follow the address on and off the node,
// and /healthz answers ok while the holder renews.
func TestHealthAndMetrics(t *testing.T) {
	c := fake.NewClientset()
	n := &fakeNetwork{addrs: map[string]bool{}}
	m := New(Config{VIP: net.ParseIP("10.0.0.100").To4(), Interface: "eth0", Identity: "a", Lease: testLease(), Announcements: 1}, c, n, logr.Discard())
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	metric := func(line string) func() bool {
		return func() bool { _, body := get("/metrics"); return strings.Contains(body, line+"\n") }
	}
	if code, body := get("/healthz"); code != http.StatusOK || body != "ok" {
		t.Errorf("/healthz before the election: %d %q", code, body)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	testwait.ForTrue(t, 10*time.Second, "the address", func() bool { return n.has("eth0/10.0.0.100") })
	testwait.ForTrue(t, 10*time.Second, "trireme_vip_holding 1", metric("trireme_vip_holding 1"))
	testwait.ForTrue(t, 10*time.Second, "one acquisition", metric(`trireme_vip_transitions_total{event="acquired"} 1`))
	if code, body := get("/healthz"); code != http.StatusOK {
		t.Errorf("/healthz while holding: %d %q", code, body)
	}
	stop()
	<-done
	testwait.ForTrue(t, 10*time.Second, "trireme_vip_holding 0", metric("trireme_vip_holding 0"))
	testwait.ForTrue(t, 10*time.Second, "one release", metric(`trireme_vip_transitions_total{event="released"} 1`))
}

func TestUnsolicitedNA(t *testing.T) {
	mac := net.HardwareAddr{2, 0, 0, 0, 0, 1}
	m, err := UnsolicitedNA(mac, net.ParseIP("fd00:50::10"))
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		136, 0, 0, 0, 0x20, 0, 0, 0,
		0xfd, 0, 0, 0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
		2, 1, 2, 0, 0, 0, 0, 1,
	}
	if !bytes.Equal(m, want) {
		t.Errorf("message\n%x\nwant\n%x", m, want)
	}
	if _, err := UnsolicitedNA(mac, net.ParseIP("10.0.0.1")); err == nil {
		t.Error("IPv4 accepted")
	}
}
