package endpointslice

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
)

func pod(i int, ready bool) *corev1.Pod {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	ip := fmt.Sprintf("10.1.%d.%d", i/256, i%256)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "ns", UID: types.UID(fmt.Sprint("uid-", i)), Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}},
	}
}

func service(mod func(*corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "svc-uid"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}, ClusterIP: "10.0.0.10", IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}},
	}
	if mod != nil {
		mod(s)
	}
	return s
}

func TestSync(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{corev1.LabelTopologyZone: "z1"}}}
	withPods := func(svc *corev1.Service, n, ready int) []runtime.Object {
		objs := []runtime.Object{node, svc}
		for i := range n {
			objs = append(objs, pod(i, i < ready))
		}
		return objs
	}
	tests := []struct {
		name       string
		objs       []runtime.Object
		wantSlices int
		wantReady  int
		wantTotal  int
	}{
		{"ready and not ready pods", withPods(service(nil), 3, 2), 1, 2, 3},
		{"250 pods take three slices", withPods(service(nil), 250, 250), 3, 250, 250},
		{"selector-less service is the mirroring controller's", withPods(service(func(s *corev1.Service) { s.Spec.Selector = nil }), 2, 2), 0, 0, 0},
		{"ExternalName service has no endpoints", withPods(service(func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeExternalName
			s.Spec.ExternalName = "example.com"
		}), 2, 2), 0, 0, 0},
		{"publishNotReadyAddresses", withPods(service(func(s *corev1.Service) { s.Spec.PublishNotReadyAddresses = true }), 2, 0), 1, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			client := fake.NewClientset(tt.objs...)
			// The fake does not implement generateName.
			n := 0
			client.PrependReactor("create", "endpointslices", func(a clienttesting.Action) (bool, runtime.Object, error) {
				s := a.(clienttesting.CreateAction).GetObject().(*discoveryv1.EndpointSlice)
				if s.Name == "" {
					n++
					s.Name = fmt.Sprintf("%s%d", s.GenerateName, n)
				}
				return false, nil, nil
			})
			f := informers.NewSharedInformerFactory(client, 0)
			c, err := New(Options{Client: client, Services: f.Core().V1().Services(), Pods: f.Core().V1().Pods(),
				Nodes: f.Core().V1().Nodes(), Slices: f.Discovery().V1().EndpointSlices(), Recorder: record.NewFakeRecorder(10), TopologyHints: true})
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
			list, err := client.DiscoveryV1().EndpointSlices("ns").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ready, total := 0, 0
			for _, s := range list.Items {
				if s.Labels[discoveryv1.LabelManagedBy] != ManagedBy || s.Labels[discoveryv1.LabelServiceName] != "web" {
					t.Errorf("slice labels %v", s.Labels)
				}
				if len(s.Endpoints) > DefaultMaxEndpointsPerSlice {
					t.Errorf("slice with %d endpoints", len(s.Endpoints))
				}
				for _, e := range s.Endpoints {
					total++
					if *e.Conditions.Ready {
						ready++
					}
					if e.Zone == nil || *e.Zone != "z1" {
						t.Errorf("endpoint zone = %v, want z1", e.Zone)
					}
				}
			}
			if len(list.Items) != tt.wantSlices || ready != tt.wantReady || total != tt.wantTotal {
				t.Errorf("slices %d ready %d total %d; want %d, %d, %d", len(list.Items), ready, total, tt.wantSlices, tt.wantReady, tt.wantTotal)
			}
		})
	}
}

// TestRecreatesDeletedSlices follows upstream's conformance spec "should
// create Endpoints and EndpointSlices for Pods matching a Service": slices
// someone else deletes are made again.
func TestRecreatesDeletedSlices(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	client := fake.NewClientset(node, service(nil), pod(0, true))
	n := 0
	client.PrependReactor("create", "endpointslices", func(a clienttesting.Action) (bool, runtime.Object, error) {
		s := a.(clienttesting.CreateAction).GetObject().(*discoveryv1.EndpointSlice)
		if s.Name == "" {
			n++
			s.Name = fmt.Sprintf("%s%d", s.GenerateName, n)
			s.UID = types.UID(s.Name)
		}
		return false, nil, nil
	})
	f := informers.NewSharedInformerFactory(client, 0)
	c, err := New(Options{Client: client, Services: f.Core().V1().Services(), Pods: f.Core().V1().Pods(),
		Nodes: f.Core().V1().Nodes(), Slices: f.Discovery().V1().EndpointSlices(), Recorder: record.NewFakeRecorder(10)})
	if err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	done := make(chan struct{})
	go func() { c.Run(ctx, 1); close(done) }()
	defer func() { cancel(); <-done; f.Shutdown() }()

	slice := func() string {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			list, err := client.DiscoveryV1().EndpointSlices("ns").List(ctx, metav1.ListOptions{})
			if err == nil && len(list.Items) == 1 && len(list.Items[0].Endpoints) == 1 {
				return list.Items[0].Name
			}
		}
		t.Fatal("no slice with the pod's endpoint")
		return ""
	}
	first := slice()
	if err := client.DiscoveryV1().EndpointSlices("ns").Delete(ctx, first, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if again := slice(); again == first {
		t.Errorf("slice %s still there after its deletion", first)
	}
}
