package endpointslicemirroring

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/fakecluster"
)

func TestSync(t *testing.T) {
	service := func(selector map[string]string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "ns"}, Spec: corev1.ServiceSpec{Selector: selector}}
	}
	endpoints := func(ips ...string) *corev1.Endpoints {
		ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ext", Namespace: "ns", UID: "ep-uid"}}
		subset := corev1.EndpointSubset{Ports: []corev1.EndpointPort{{Name: "db", Port: 5432, Protocol: corev1.ProtocolTCP}}}
		for _, ip := range ips {
			subset.Addresses = append(subset.Addresses, corev1.EndpointAddress{IP: ip})
		}
		ep.Subsets = []corev1.EndpointSubset{subset}
		return ep
	}
	skipped := endpoints("10.0.0.1")
	skipped.Labels = map[string]string{discoveryv1.LabelSkipMirror: "true"}
	// mirrored returns the slices this controller would have written for ep.
	mirrored := func(ep *corev1.Endpoints) []runtime.Object {
		want, _ := Desired(ep, DefaultMaxEndpointsPerSubset)
		var out []runtime.Object
		for i, s := range want {
			s.Name = fmt.Sprintf("ext-%d", i)
			out = append(out, s)
		}
		return out
	}
	tests := []struct {
		name        string
		objs        []runtime.Object
		wantActions []string
		wantIPs     []string // of the one slice left, when wantSlices is 1
		wantSlices  int
	}{
		{"selector-less service is mirrored", []runtime.Object{service(nil), endpoints("10.0.0.1", "10.0.0.2")},
			[]string{"create endpointslices"}, []string{"10.0.0.1", "10.0.0.2"}, 1},
		{"service with a selector is left to the endpointslice controller", []runtime.Object{service(map[string]string{"app": "db"}), endpoints("10.0.0.1")},
			nil, nil, 0},
		{"endpoints asking to be skipped", []runtime.Object{service(nil), skipped},
			nil, nil, 0},
		{"endpoints without a service", []runtime.Object{endpoints("10.0.0.1")},
			nil, nil, 0},
		{"in sync: no writes", append([]runtime.Object{service(nil), endpoints("10.0.0.1")}, mirrored(endpoints("10.0.0.1"))...),
			nil, []string{"10.0.0.1"}, 1},
		{"changed addresses update the slice", append([]runtime.Object{service(nil), endpoints("10.0.0.9")}, mirrored(endpoints("10.0.0.1"))...),
			[]string{"update endpointslices"}, []string{"10.0.0.9"}, 1},
		{"service given a selector loses its mirrored slice", append([]runtime.Object{service(map[string]string{"app": "db"}), endpoints("10.0.0.1")}, mirrored(endpoints("10.0.0.1"))...),
			[]string{"delete endpointslices"}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fakecluster.Client(tt.objs...)
			f := informers.NewSharedInformerFactory(cs, 0)
			c, err := New(Options{Client: cs, Services: f.Core().V1().Services(), Endpoints: f.Core().V1().Endpoints(),
				Slices: f.Discovery().V1().EndpointSlices(), Recorder: record.NewFakeRecorder(10)})
			if err != nil {
				t.Fatal(err)
			}
			fakecluster.Start(t, f)
			if err := c.sync(context.Background(), "ns/ext"); err != nil {
				t.Fatal(err)
			}
			if got := fakecluster.Actions(cs); fmt.Sprint(got) != fmt.Sprint(tt.wantActions) {
				t.Errorf("actions = %v, want %v", got, tt.wantActions)
			}
			list, err := cs.DiscoveryV1().EndpointSlices("ns").List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Items) != tt.wantSlices {
				t.Fatalf("%d slices, want %d", len(list.Items), tt.wantSlices)
			}
			if tt.wantSlices != 1 {
				return
			}
			s := list.Items[0]
			var ips []string
			for _, e := range s.Endpoints {
				ips = append(ips, e.Addresses...)
			}
			if fmt.Sprint(ips) != fmt.Sprint(tt.wantIPs) {
				t.Errorf("slice addresses = %v, want %v", ips, tt.wantIPs)
			}
			if s.Labels[discoveryv1.LabelManagedBy] != ManagedBy || s.Labels[discoveryv1.LabelServiceName] != "ext" {
				t.Errorf("slice labels = %v, want managed-by %s and service-name ext", s.Labels, ManagedBy)
			}
			if ref := metav1.GetControllerOf(&s); ref == nil || ref.Kind != "Endpoints" || ref.UID != "ep-uid" {
				t.Errorf("slice controller = %+v, want the Endpoints", ref)
			}
		})
	}
}
