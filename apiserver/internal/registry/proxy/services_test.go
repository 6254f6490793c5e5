package proxy

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func service(name string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: ports, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}},
	}
}

// endpoint is a ready endpoint backed by the named pod in "default".
func endpoint(ip, podName string) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{
		Addresses:  []string{ip},
		Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: podName},
	}
}

func slice(name, svc string, ports []discoveryv1.EndpointPort, eps ...discoveryv1.Endpoint) discoveryv1.EndpointSlice {
	return discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   eps,
		Ports:       ports,
	}
}

func port(name string, n int32) discoveryv1.EndpointPort {
	return discoveryv1.EndpointPort{Name: ptr.To(name), Port: ptr.To(n)}
}

func TestLocateService(t *testing.T) {
	services := newObjects("services",
		service("web", corev1.ServicePort{Name: "http", Port: 80}, corev1.ServicePort{Name: "admin", Port: 81}),
		service("single", corev1.ServicePort{Port: 80}),
		service("empty", corev1.ServicePort{Name: "http", Port: 80}),
		service("notready", corev1.ServicePort{Name: "http", Port: 80}),
		service("stray", corev1.ServicePort{Name: "http", Port: 80}),
	)
	pods := newObjects("pods", pod("web-1", "10.0.0.5"), pod("single-1", "10.0.0.9"))
	notReady := endpoint("10.0.0.5", "web-1")
	notReady.Conditions.Ready = ptr.To(false)
	noRef := endpoint("10.0.0.5", "web-1")
	noRef.TargetRef = nil
	otherNS := endpoint("10.0.0.5", "web-1")
	otherNS.TargetRef.Namespace = "kube-system"
	slices := &sliceList{items: []discoveryv1.EndpointSlice{
		slice("web-a", "web", []discoveryv1.EndpointPort{port("http", 8080), port("admin", 9000)}, endpoint("10.0.0.5", "web-1")),
		slice("single-a", "single", []discoveryv1.EndpointPort{port("", 8080)}, endpoint("10.0.0.9", "single-1")),
		slice("notready-a", "notready", []discoveryv1.EndpointPort{port("http", 8080)}, notReady),
		// Endpoints that are not the address of a pod in the namespace.
		slice("stray-a", "stray", []discoveryv1.EndpointPort{port("http", 8080)},
			noRef, otherNS, endpoint("10.9.9.9", "web-1"), endpoint("10.0.0.5", "ghost")),
	}}
	loc := &serviceLocator{services: services, pods: pods, slices: slices}

	tests := []struct {
		name, id string
		want     string
		wantCode int32
		wantMsg  string
	}{
		{name: "named port", id: "web:http", want: "//10.0.0.5:8080"},
		{name: "second named port", id: "web:admin", want: "//10.0.0.5:9000"},
		{name: "port number maps to its name", id: "web:81", want: "//10.0.0.5:9000"},
		{name: "https scheme", id: "https:web:http", want: "https://10.0.0.5:8080"},
		{name: "unnamed single port", id: "single", want: "//10.0.0.9:8080"},
		{name: "unnamed single port by number", id: "single:80", want: "//10.0.0.9:8080"},
		{name: "unknown port number", id: "web:82", wantCode: 503, wantMsg: "no service port 82"},
		{name: "unknown port name", id: "web:nope", wantCode: 503, wantMsg: "no endpoints available"},
		{name: "no endpoint slices", id: "empty:http", wantCode: 503, wantMsg: `no endpoints available for service "empty"`},
		{name: "no ready endpoints", id: "notready:http", wantCode: 503, wantMsg: "no endpoints available"},
		{name: "endpoints not backed by a pod", id: "stray:http", wantCode: 503, wantMsg: "no endpoints available"},
		{name: "missing service", id: "ghost:http", wantCode: 404},
		{name: "bad id", id: "ftp:web:http", wantCode: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := loc.locate(context.Background(), tt.id)
			if tt.wantCode != 0 {
				if got := statusCode(err); got != tt.wantCode || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("locate(%q) error = %v (code %d), want code %d containing %q", tt.id, err, got, tt.wantCode, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("locate(%q): %v", tt.id, err)
			}
			if u.String() != tt.want {
				t.Fatalf("locate(%q) = %q, want %q", tt.id, u, tt.want)
			}
		})
	}
}

// TestLocateServiceSpreads checks that requests spread over the ready
// endpoints rather than sticking to one.
func TestLocateServiceSpreads(t *testing.T) {
	services := newObjects("services", service("web", corev1.ServicePort{Name: "http", Port: 80}))
	pods := newObjects("pods", pod("a", "10.0.0.1"), pod("b", "10.0.0.2"), pod("c", "10.0.0.3"))
	slices := &sliceList{items: []discoveryv1.EndpointSlice{
		slice("web-a", "web", []discoveryv1.EndpointPort{port("http", 8080)}, endpoint("10.0.0.1", "a"), endpoint("10.0.0.2", "b")),
		slice("web-b", "web", []discoveryv1.EndpointPort{port("http", 8080)}, endpoint("10.0.0.3", "c")),
	}}
	loc := &serviceLocator{services: services, pods: pods, slices: slices}
	seen := map[string]bool{}
	for i := 0; i < 200 && len(seen) < 3; i++ {
		u, err := loc.locate(context.Background(), "web:http")
		if err != nil {
			t.Fatal(err)
		}
		seen[u.Host] = true
	}
	if len(seen) != 3 {
		t.Fatalf("200 requests reached only %v, want all three endpoints", seen)
	}
}
