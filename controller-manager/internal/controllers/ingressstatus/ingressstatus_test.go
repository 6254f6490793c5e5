package ingressstatus

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"

	"trireme.dev/componentbase/testwait"
	"trireme.dev/controller-manager/internal/fakecluster"
)

// class is IngressClass name, publishing published when it is not empty.
func class(name, published string, isDefault bool) *networkingv1.IngressClass {
	c := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{}}}
	if published != "" {
		c.Annotations[PublishedService] = published
	}
	if isDefault {
		c.Annotations[defaultClass] = "true"
	}
	return c
}

// lbService is Service kube-system/traefik of type LoadBalancer at ips.
func lbService(ips ...string) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "traefik", Namespace: "kube-system"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer}}
	for _, ip := range ips {
		svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	return svc
}

// ing is Ingress ns/web of className (none when empty), showing shown.
func ing(className string, shown ...string) *networkingv1.Ingress {
	i := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
	if className != "" {
		i.Spec.IngressClassName = ptr.To(className)
	}
	for _, ip := range shown {
		i.Status.LoadBalancer.Ingress = append(i.Status.LoadBalancer.Ingress, networkingv1.IngressLoadBalancerIngress{IP: ip})
	}
	return i
}

func ips(list ...string) []networkingv1.IngressLoadBalancerIngress {
	var out []networkingv1.IngressLoadBalancerIngress
	for _, ip := range list {
		out = append(out, networkingv1.IngressLoadBalancerIngress{IP: ip})
	}
	return out
}

// start returns the controller over a fake clientset holding objs, its
// informers synced, and the clientset and the recorder it writes to.
func start(t *testing.T, objs ...runtime.Object) (*Controller, *fake.Clientset, *record.FakeRecorder) {
	t.Helper()
	cs := fakecluster.Client(objs...)
	f := informers.NewSharedInformerFactory(cs, 0)
	events := record.NewFakeRecorder(10)
	c, err := New(Options{Client: cs, Ingresses: f.Networking().V1().Ingresses(),
		IngressClasses: f.Networking().V1().IngressClasses(), Services: f.Core().V1().Services(), Recorder: events})
	if err != nil {
		t.Fatal(err)
	}
	fakecluster.Start(t, f)
	return c, cs, events
}

func TestSync(t *testing.T) {
	legacy := ing("")
	legacy.Annotations = map[string]string{legacyClass: "traefik"}
	external := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "traefik", Namespace: "kube-system"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ExternalIPs: []string{"198.51.100.7"},
			Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}}}}
	tests := []struct {
		name  string
		objs  []runtime.Object
		want  []networkingv1.IngressLoadBalancerIngress
		write bool
		event string
	}{
		{"class by name: its Service's address",
			[]runtime.Object{class("traefik", "kube-system/traefik", false), lbService("172.29.254.2"), ing("traefik")},
			ips("172.29.254.2"), true, ""},
		{"no class: the default one's",
			[]runtime.Object{class("other", "", false), class("traefik", "kube-system/traefik", true), lbService("172.29.254.2"), ing("")},
			ips("172.29.254.2"), true, ""},
		{"the legacy annotation's class",
			[]runtime.Object{class("traefik", "kube-system/traefik", false), lbService("172.29.254.2"), legacy},
			ips("172.29.254.2"), true, ""},
		{"an address that changed is replaced",
			[]runtime.Object{class("traefik", "kube-system/traefik", false), lbService("172.29.254.3"), ing("traefik", "172.29.254.2")},
			ips("172.29.254.3"), true, ""},
		{"the address it shows: no write",
			[]runtime.Object{class("traefik", "kube-system/traefik", false), lbService("172.29.254.2"), ing("traefik", "172.29.254.2")},
			ips("172.29.254.2"), false, ""},
		{"a LoadBalancer still pending: the Ingress keeps what it has",
			[]runtime.Object{class("traefik", "kube-system/traefik", false), lbService(), ing("traefik", "172.29.254.2")},
			ips("172.29.254.2"), false, ""},
		{"external IPs with the Service's ports",
			[]runtime.Object{class("traefik", "kube-system/traefik", false), external, ing("traefik")},
			[]networkingv1.IngressLoadBalancerIngress{{IP: "198.51.100.7", Ports: []networkingv1.IngressPortStatus{{Port: 80, Protocol: corev1.ProtocolTCP}}}}, true, ""},
		{"a class that publishes nothing is another controller's",
			[]runtime.Object{class("nginx", "", false), lbService("172.29.254.2"), ing("nginx")},
			nil, false, ""},
		{"a class that does not exist",
			[]runtime.Object{lbService("172.29.254.2"), ing("traefik")},
			nil, false, ""},
		{"no class and no default",
			[]runtime.Object{class("traefik", "kube-system/traefik", false), lbService("172.29.254.2"), ing("")},
			nil, false, ""},
		{"a published Service that does not exist: a Warning on the class",
			[]runtime.Object{class("traefik", "kube-system/missing", false), lbService("172.29.254.2"), ing("traefik")},
			nil, false, "Warning PublishedServiceNotFound"},
		{"a malformed annotation: a Warning on the class",
			[]runtime.Object{class("traefik", "traefik", false), ing("traefik")},
			nil, false, "want namespace/name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, cs, events := start(t, tt.objs...)
			if err := c.sync(context.Background(), "ns/web"); err != nil {
				t.Fatalf("sync: %v", err)
			}
			wrote := strings.Join(fakecluster.Actions(cs), ",") == "update ingresses/status"
			if wrote != tt.write {
				t.Errorf("writes %v, want the status written: %v", fakecluster.Actions(cs), tt.write)
			}
			got, err := cs.NetworkingV1().Ingresses("ns").Get(context.Background(), "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(got.Status.LoadBalancer.Ingress, tt.want) {
				t.Errorf("status %+v, want %+v", got.Status.LoadBalancer.Ingress, tt.want)
			}
			var event string
			select {
			case event = <-events.Events:
			default:
			}
			if (tt.event == "") != (event == "") || !strings.Contains(event, tt.event) {
				t.Errorf("event %q, want one with %q", event, tt.event)
			}
		})
	}
}

// TestServiceAddressChange: an address given to the published Service
// reaches its class's Ingresses through the handlers and the loop.
func TestServiceAddressChange(t *testing.T) {
	c, cs, _ := start(t, class("traefik", "kube-system/traefik", true), lbService(), ing(""))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Run(ctx, 1)
	if _, err := cs.CoreV1().Services("kube-system").UpdateStatus(ctx, lbService("172.29.254.9"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testwait.ForTrue(t, 10*time.Second, "the Ingress showing the Service's new address", func() bool {
		got, err := cs.NetworkingV1().Ingresses("ns").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && equality.Semantic.DeepEqual(got.Status.LoadBalancer.Ingress, ips("172.29.254.9"))
	})
}
