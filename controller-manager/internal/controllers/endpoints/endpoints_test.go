package endpoints

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
)

func pod(name, ip string, ready bool, mods ...func(*corev1.Pod)) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: k8stypes.UID("uid-" + name), Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
	for _, m := range mods {
		m(p)
	}
	return p
}

func service(mods ...func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Labels: map[string]string{"team": "a"}},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, ClusterIP: "10.0.0.10",
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("http")}}},
	}
	for _, m := range mods {
		m(s)
	}
	return s
}

func TestSubsets(t *testing.T) {
	tests := []struct {
		name              string
		svc               *corev1.Service
		pods              []*corev1.Pod
		ready, notReady   int
		wantPort          int32
		wantSubsetsLength int
	}{
		{"ready and not ready", service(), []*corev1.Pod{pod("a", "10.1.0.1", true), pod("b", "10.1.0.2", false)}, 1, 1, 8080, 1},
		{"publishNotReadyAddresses makes all ready", service(func(s *corev1.Service) { s.Spec.PublishNotReadyAddresses = true }),
			[]*corev1.Pod{pod("a", "10.1.0.1", true), pod("b", "10.1.0.2", false)}, 2, 0, 8080, 1},
		{"pod without IP left out", service(), []*corev1.Pod{pod("a", "", true)}, 0, 0, 0, 0},
		{"terminated pod left out", service(), []*corev1.Pod{pod("a", "10.1.0.1", false, func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })}, 0, 0, 0, 0},
		{"named port the pod lacks drops it", service(func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromString("grpc") }),
			[]*corev1.Pod{pod("a", "10.1.0.1", true)}, 0, 0, 0, 0},
		{"numeric target port", service(func(s *corev1.Service) { s.Spec.Ports[0].TargetPort = intstr.FromInt32(9090) }),
			[]*corev1.Pod{pod("a", "10.1.0.1", true)}, 1, 0, 9090, 1},
		{"headless without ports", service(func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone; s.Spec.Ports = nil }),
			[]*corev1.Pod{pod("a", "10.1.0.1", true)}, 1, 0, 0, 1},
		{"pods with different ports get different subsets", service(), []*corev1.Pod{pod("a", "10.1.0.1", true),
			pod("b", "10.1.0.2", true, func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort = 8081 })}, 2, 0, 8080, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Subsets(tt.svc, tt.pods)
			if len(got) != tt.wantSubsetsLength {
				t.Fatalf("subsets = %+v, want %d", got, tt.wantSubsetsLength)
			}
			ready, notReady := 0, 0
			for _, s := range got {
				ready += len(s.Addresses)
				notReady += len(s.NotReadyAddresses)
			}
			if ready != tt.ready || notReady != tt.notReady {
				t.Errorf("ready %d not ready %d, want %d and %d", ready, notReady, tt.ready, tt.notReady)
			}
			if tt.wantPort != 0 && got[0].Ports[0].Port != tt.wantPort {
				t.Errorf("port = %d, want %d", got[0].Ports[0].Port, tt.wantPort)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	addrs := func(n int) []corev1.EndpointAddress {
		out := make([]corev1.EndpointAddress, n)
		for i := range out {
			out[i].IP = fmt.Sprintf("10.0.%d.%d", i/256, i%256)
		}
		return out
	}
	tests := []struct {
		name          string
		subsets       []corev1.EndpointSubset
		max           int
		wantTruncated bool
		wantReady     int
	}{
		{"under capacity", []corev1.EndpointSubset{{Addresses: addrs(10)}}, 1000, false, 10},
		{"ready first", []corev1.EndpointSubset{{Addresses: addrs(800), NotReadyAddresses: addrs(800)}}, 1000, true, 800},
		{"ready alone over", []corev1.EndpointSubset{{Addresses: addrs(600)}, {Addresses: addrs(600)}}, 1000, true, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, truncated := Truncate(tt.subsets, tt.max)
			total, ready := 0, 0
			for _, s := range got {
				total += len(s.Addresses) + len(s.NotReadyAddresses)
				ready += len(s.Addresses)
			}
			if truncated != tt.wantTruncated || total > tt.max || ready != tt.wantReady {
				t.Errorf("truncated %v total %d ready %d; want truncated %v, at most %d, ready %d", truncated, total, ready, tt.wantTruncated, tt.max, tt.wantReady)
			}
		})
	}
}

func TestSync(t *testing.T) {
	many := []runtime.Object{service()}
	for i := range 1001 {
		many = append(many, pod(fmt.Sprintf("p%d", i), fmt.Sprintf("10.2.%d.%d", i/256, i%256), true))
	}
	tests := []struct {
		name          string
		objs          []runtime.Object
		wantSubsets   int
		wantExists    bool
		wantTruncated bool
	}{
		{"creates endpoints with the service's labels", []runtime.Object{service(), pod("a", "10.1.0.1", true)}, 1, true, false},
		{"selector-less service is left alone", []runtime.Object{service(func(s *corev1.Service) { s.Spec.Selector = nil })}, 0, false, false},
		{"deleted service loses its endpoints", []runtime.Object{&corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}}, 0, false, false},
		{"over capacity is truncated and annotated", many, 1, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			client := fake.NewClientset(tt.objs...)
			f := informers.NewSharedInformerFactory(client, 0)
			c, err := New(Options{Client: client, Services: f.Core().V1().Services(), Pods: f.Core().V1().Pods(),
				Endpoints: f.Core().V1().Endpoints(), Recorder: record.NewFakeRecorder(10)})
			if err != nil {
				t.Fatal(err)
			}
			f.Start(ctx.Done())
			f.WaitForCacheSync(ctx.Done())
			defer f.Shutdown()
			defer cancel()
			if err := c.sync(ctx, "ns/web"); err != nil {
				t.Fatalf("sync: %v", err)
			}
			ep, err := client.CoreV1().Endpoints("ns").Get(ctx, "web", metav1.GetOptions{})
			if exists := err == nil; exists != tt.wantExists {
				t.Fatalf("endpoints exist = %v, want %v", exists, tt.wantExists)
			}
			if !tt.wantExists {
				return
			}
			if len(ep.Subsets) != tt.wantSubsets || ep.Labels["team"] != "a" || ep.Labels[discoveryv1.LabelSkipMirror] != "true" {
				t.Errorf("endpoints = %+v", ep.ObjectMeta)
			}
			if got := ep.Annotations[OverCapacityAnnotation] == TruncatedValue; got != tt.wantTruncated {
				t.Errorf("over-capacity annotation = %v, want %v", got, tt.wantTruncated)
			}
		})
	}
}

func TestWriteTracker(t *testing.T) {
	ep := func(rv string) *corev1.Endpoints {
		return &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "svc", ResourceVersion: rv}}
	}
	tests := []struct {
		name     string
		replaced *corev1.Endpoints
		cached   *corev1.Endpoints
		deleted  bool
		stale    bool
	}{
		{"cache still holds the version written over", ep("5"), ep("5"), false, true},
		{"cache holds the write", ep("5"), ep("6"), false, false},
		{"cache moved past the write", ep("5"), ep("9"), false, false},
		{"created, cache has none yet", nil, nil, false, true},
		{"created, cache has it", nil, ep("6"), false, false},
		{"created then deleted by someone", nil, nil, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w writeTracker
			w.wrote("ns/svc", tt.replaced, ep("6"))
			if !w.own(ep("6")) || w.own(ep("7")) {
				t.Errorf("own: the write's own version must be recognised, no other")
			}
			if tt.deleted {
				w.forget("ns/svc")
			}
			if got := w.stale("ns/svc", tt.cached); got != tt.stale {
				t.Errorf("stale = %v, want %v", got, tt.stale)
			}
			if w.stale("other/svc", nil) {
				t.Errorf("a key never written is never stale")
			}
		})
	}
}

// TestLeavesEndpointsOfNoService follows upstream's conformance spec
// "should test the lifecycle of an Endpoint": an Endpoints made and
// changed by hand, with no Service of its name, is not the controller's.
func TestLeavesEndpointsOfNoService(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	manual := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "manual", Namespace: "ns", Labels: map[string]string{"by": "hand"}},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.24"}}, Ports: []corev1.EndpointPort{{Name: "http", Port: 80}}}}}
	client := fake.NewClientset(manual)
	f := informers.NewSharedInformerFactory(client, 0)
	c, err := New(Options{Client: client, Services: f.Core().V1().Services(), Pods: f.Core().V1().Pods(),
		Endpoints: f.Core().V1().Endpoints(), Recorder: record.NewFakeRecorder(10)})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	done := make(chan struct{})
	go func() { c.Run(ctx, 1); close(done) }()
	defer func() { cancel(); <-done; f.Shutdown() }()

	patch := `{"metadata":{"labels":{"test":"patched"}},"subsets":[{"addresses":[{"ip":"10.0.0.25"}],"ports":[{"name":"http-test","port":8080}]}]}`
	if _, err := client.CoreV1().Endpoints("ns").Patch(ctx, "manual", k8stypes.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	eventually("the patch in the cache", func() bool {
		ep, err := c.endpoints.Endpoints("ns").Get("manual")
		return err == nil && ep.Labels["test"] == "patched"
	})
	// A Service synced after the patch event shows that event was handled.
	if _, err := client.CoreV1().Services("ns").Create(ctx, service(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually("endpoints of service web", func() bool {
		_, err := client.CoreV1().Endpoints("ns").Get(ctx, "web", metav1.GetOptions{})
		return err == nil
	})
	ep, err := client.CoreV1().Endpoints("ns").Get(ctx, "manual", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("hand-made endpoints: %v", err)
	}
	if ep.Subsets[0].Addresses[0].IP != "10.0.0.25" || ep.Subsets[0].Ports[0].Port != 8080 {
		t.Errorf("hand-made endpoints rewritten: %+v", ep.Subsets)
	}
}
