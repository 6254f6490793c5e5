package proxier

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clientevents "k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"

	"trireme.dev/proxy/internal/backend"
	"trireme.dev/proxy/internal/healthcheck"
	"trireme.dev/proxy/internal/metrics"
	"trireme.dev/proxy/internal/model"

	"trireme.dev/componentbase/testwait"
)

// recorder is a back end that remembers requests and fails while told to.
type recorder struct {
	mu   sync.Mutex
	reqs []backend.Request
	fail bool
}

func (r *recorder) Sync(_ context.Context, req backend.Request) (backend.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cp := req
	cp.State = model.State{}
	for k, v := range req.State {
		cp.State[k] = v
	}
	r.reqs = append(r.reqs, cp)
	if r.fail {
		return backend.Result{}, errors.New("iptables-restore: exit status 4")
	}
	return backend.Result{Rules: len(req.Changed), Total: len(req.State)}, nil
}

func (r *recorder) Cleanup(context.Context) error { return nil }

func (r *recorder) last() (backend.Request, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) == 0 {
		return backend.Request{}, 0
	}
	return r.reqs[len(r.reqs)-1], len(r.reqs)
}

func (r *recorder) setFail(f bool) {
	r.mu.Lock()
	r.fail = f
	r.mu.Unlock()
}

func svc(name string, proto v1.Protocol) *v1.Service {
	return &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec: v1.ServiceSpec{ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"}, Type: v1.ServiceTypeClusterIP,
			Ports: []v1.ServicePort{{Name: "p", Port: 80, Protocol: proto}}},
	}
}

func epSlice(svcName string, ips ...string) *discovery.EndpointSlice {
	es := &discovery.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: "ns", Name: svcName + "-1", Labels: map[string]string{discovery.LabelServiceName: svcName}},
		AddressType: discovery.AddressTypeIPv4,
		Ports:       []discovery.EndpointPort{{Name: ptr.To("p"), Port: ptr.To[int32](8080), Protocol: ptr.To(v1.ProtocolTCP)}},
	}
	for _, ip := range ips {
		es.Endpoints = append(es.Endpoints, discovery.Endpoint{Addresses: []string{ip}})
	}
	return es
}

func TestSyncLoop(t *testing.T) {
	ctx, cancel := context.WithCancel(logr.NewContext(context.Background(), testr.New(t)))
	defer cancel()
	client := fake.NewClientset(svc("web", v1.ProtocolTCP), epSlice("web", "10.0.0.1"), svc("bad", "ICMP"))
	rec := &recorder{}
	m := metrics.New()
	health := healthcheck.NewProxyHealth(300 * time.Millisecond)
	events := clientevents.NewFakeRecorder(10)
	p := New(Config{NodeName: "node", MinSyncPeriod: 10 * time.Millisecond, SyncPeriod: time.Hour, Recorder: events}, client, rec, health, &healthcheck.Services{}, m)
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()

	web := model.ServicePortName{Port: "p", Protocol: v1.ProtocolTCP}
	web.Namespace, web.Name = "ns", "web"

	t.Run("first sync is full, bad Service skipped with the rest synced", func(t *testing.T) {
		testwait.ForTrue(t, 10*time.Second, "a sync", func() bool { _, n := rec.last(); return n > 0 })
		rec.mu.Lock()
		req := rec.reqs[0]
		rec.mu.Unlock()
		if !req.Full || len(req.State) != 1 || len(req.State[web].Endpoints) != 1 {
			t.Fatalf("first request = %+v", req)
		}
		if got := testutil.ToFloat64(m.Skipped); got < 1 {
			t.Errorf("skipped = %v, want the ICMP port counted", got)
		}
		select {
		case e := <-events.Events:
			if want := `Warning UnsupportedProtocol port "p": unsupported protocol "ICMP"`; e != want {
				t.Errorf("event = %q, want %q", e, want)
			}
		default:
			t.Error("no Event for the skipped Service")
		}
	})

	t.Run("an endpoint change is a partial sync of that port", func(t *testing.T) {
		_, before := rec.last()
		if _, err := client.DiscoveryV1().EndpointSlices("ns").Update(ctx, epSlice("web", "10.0.0.1", "10.0.0.2"), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		testwait.ForTrue(t, 10*time.Second, "the partial sync", func() bool {
			req, n := rec.last()
			return n > before && len(req.State[web].Endpoints) == 2
		})
		req, _ := rec.last()
		if req.Full {
			t.Error("sync after one change was full")
		}
		if _, ok := req.Changed[web]; !ok || len(req.Changed) != 1 {
			t.Errorf("changed = %v", req.Changed)
		}
	})

	t.Run("a failed write is retried fully, counted, and turns health bad until it succeeds", func(t *testing.T) {
		rec.setFail(true)
		if _, err := client.DiscoveryV1().EndpointSlices("ns").Update(ctx, epSlice("web", "10.0.0.3"), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		testwait.ForTrue(t, 10*time.Second, "failures", func() bool { return testutil.ToFloat64(m.SyncFailures) >= 2 })
		req, _ := rec.last()
		if !req.Full {
			t.Error("retry after a failure was not full")
		}
		testwait.ForTrue(t, 10*time.Second, "unhealthy", func() bool { ok, _, _ := health.Healthy(); return !ok })
		rec.setFail(false)
		testwait.ForTrue(t, 10*time.Second, "healthy again", func() bool { ok, _, _ := health.Healthy(); return ok })
		req, _ = rec.last()
		if eps := req.State[web].Endpoints; len(eps) != 1 || eps[0].IP.String() != "10.0.0.3" {
			t.Errorf("after recovery endpoints = %v", eps)
		}
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
