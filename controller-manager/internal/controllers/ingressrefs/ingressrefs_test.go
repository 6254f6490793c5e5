package ingressrefs

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"trireme.dev/controller-manager/internal/fakecluster"
)

func service(name string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: corev1.ServiceSpec{Ports: ports}}
}

func secret(name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
	}
}

var web = corev1.ServicePort{Name: "web", Port: 80}

func byNumber(svc string, port int32) networkingv1.IngressBackend {
	return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Number: port}}}
}

func byName(svc, port string) networkingv1.IngressBackend {
	return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Name: port}}}
}

// ingress is Ingress ns/ing with a rule for host whose paths go to
// backends, path i to /p<i>.
func ingress(host string, backends ...networkingv1.IngressBackend) *networkingv1.Ingress {
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "ing", Namespace: "ns", UID: "uid-1"}}
	rule := networkingv1.IngressRule{Host: host, IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{}}}
	for i, b := range backends {
		rule.HTTP.Paths = append(rule.HTTP.Paths, networkingv1.HTTPIngressPath{Path: "/p" + string(rune('0'+i)), Backend: b})
	}
	ing.Spec.Rules = []networkingv1.IngressRule{rule}
	return ing
}

func withTLS(ing *networkingv1.Ingress, tls ...networkingv1.IngressTLS) *networkingv1.Ingress {
	ing.Spec.TLS = tls
	return ing
}

func withDefault(ing *networkingv1.Ingress, b networkingv1.IngressBackend) *networkingv1.Ingress {
	ing.Spec.DefaultBackend = &b
	return ing
}

type harness struct {
	c         *Controller
	events    *record.FakeRecorder
	ingresses cache.Indexer
	services  cache.Indexer
	secrets   cache.Indexer
}

// start builds the controller over fake clients holding objs (typed) and
// secrets (metadata), with synced informers.
func start(t *testing.T, objs []runtime.Object, secrets ...runtime.Object) *harness {
	t.Helper()
	cs := fakecluster.Client(objs...)
	f := informers.NewSharedInformerFactory(cs, 0)
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mf := metadatainformer.NewSharedInformerFactory(metadatafake.NewSimpleMetadataClient(scheme, secrets...), 0)
	secretInformer := mf.ForResource(corev1.SchemeGroupVersion.WithResource("secrets"))
	events := record.NewFakeRecorder(100)
	c, err := New(Options{
		Ingresses: f.Networking().V1().Ingresses(),
		Services:  f.Core().V1().Services(),
		Secrets:   secretInformer,
		Recorder:  events,
	})
	if err != nil {
		t.Fatal(err)
	}
	fakecluster.Start(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		mf.Shutdown()
	})
	mf.Start(ctx.Done())
	mf.WaitForCacheSync(ctx.Done())
	return &harness{c: c, events: events,
		ingresses: f.Networking().V1().Ingresses().Informer().GetIndexer(),
		services:  f.Core().V1().Services().Informer().GetIndexer(),
		secrets:   secretInformer.Informer().GetIndexer()}
}

// sync syncs ns/ing and returns the Events it recorded.
func (h *harness) sync(t *testing.T) []string {
	t.Helper()
	if err := h.c.sync(context.Background(), "ns/ing"); err != nil {
		t.Fatalf("sync: %v", err)
	}
	var got []string
	for {
		select {
		case e := <-h.events.Events:
			got = append(got, e)
		default:
			return got
		}
	}
}

func TestProblems(t *testing.T) {
	tests := []struct {
		name    string
		ing     *networkingv1.Ingress
		objs    []runtime.Object
		secrets []runtime.Object
		want    []string
	}{
		{"every reference exists",
			withTLS(ingress("a.test", byNumber("alpha", 80), byName("alpha", "web")), networkingv1.IngressTLS{Hosts: []string{"a.test"}, SecretName: "a-tls"}),
			[]runtime.Object{service("alpha", web)}, []runtime.Object{secret("a-tls")}, nil},
		{"a missing Service, named by two paths",
			ingress("a.test", byNumber("alpha", 80), byNumber("ghost", 80), byName("ghost", "web")),
			[]runtime.Object{service("alpha", web)}, nil,
			[]string{`Warning ServiceNotFound Service "ghost" not found in namespace ns (backend of a.test/p1; backend of a.test/p2)`}},
		{"a port number the Service lacks",
			ingress("", byNumber("alpha", 8080)),
			[]runtime.Object{service("alpha", web)}, nil,
			[]string{`Warning ServicePortNotFound Service "alpha" has no port 8080 (backend of */p0)`}},
		{"a port name the Service lacks",
			ingress("a.test", byName("alpha", "http")),
			[]runtime.Object{service("alpha", web)}, nil,
			[]string{`Warning ServicePortNotFound Service "alpha" has no port named "http" (backend of a.test/p0)`}},
		{"a missing default backend",
			withDefault(ingress("a.test"), byNumber("ghost", 80)),
			nil, nil,
			[]string{`Warning ServiceNotFound Service "ghost" not found in namespace ns (default backend)`}},
		{"a resource backend names no Service",
			withDefault(ingress("a.test"), networkingv1.IngressBackend{Resource: &corev1.TypedLocalObjectReference{Kind: "Bucket", Name: "b"}}),
			nil, nil, nil},
		{"a missing TLS Secret",
			withTLS(ingress("a.test", byNumber("alpha", 80)),
				networkingv1.IngressTLS{Hosts: []string{"a.test", "b.test"}, SecretName: "missing-tls"},
				networkingv1.IngressTLS{SecretName: "other-tls"},
				networkingv1.IngressTLS{Hosts: []string{"c.test"}}),
			[]runtime.Object{service("alpha", web)}, nil,
			[]string{`Warning SecretNotFound Secret "missing-tls" not found in namespace ns (TLS of a.test, b.test)`,
				`Warning SecretNotFound Secret "other-tls" not found in namespace ns (TLS of every host)`}},
		{"a Service of another namespace does not count",
			ingress("a.test", byNumber("alpha", 80)),
			[]runtime.Object{&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "alpha", Namespace: "other"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{web}}}}, nil,
			[]string{`Warning ServiceNotFound Service "alpha" not found in namespace ns (backend of a.test/p0)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, append(tt.objs, tt.ing), tt.secrets...)
			if got := h.sync(t); !slices.Equal(got, tt.want) {
				t.Errorf("events:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}

func TestWarnsOnce(t *testing.T) {
	ing := withTLS(ingress("a.test", byNumber("alpha", 80), byNumber("ghost", 80)), networkingv1.IngressTLS{SecretName: "a-tls"})
	h := start(t, []runtime.Object{ing, service("alpha", web)})
	ghost := `Warning ServiceNotFound Service "ghost" not found in namespace ns (backend of a.test/p1)`
	noSecret := `Warning SecretNotFound Secret "a-tls" not found in namespace ns (TLS of every host)`
	steps := []struct {
		name   string
		change func(t *testing.T)
		want   []string
	}{
		{"first sync warns", func(*testing.T) {}, []string{ghost, noSecret}},
		{"a resync repeats nothing", func(*testing.T) {}, nil},
		{"the Secret appears", func(t *testing.T) { must(t, h.secrets.Add(secret("a-tls"))) }, nil},
		{"the Secret goes again", func(t *testing.T) { must(t, h.secrets.Delete(secret("a-tls"))) }, []string{noSecret}},
		{"one more path to the missing Service", func(t *testing.T) {
			changed := ing.DeepCopy()
			changed.Spec.Rules[0].HTTP.Paths = append(changed.Spec.Rules[0].HTTP.Paths,
				networkingv1.HTTPIngressPath{Path: "/more", Backend: byNumber("ghost", 80)})
			must(t, h.ingresses.Update(changed))
		}, []string{`Warning ServiceNotFound Service "ghost" not found in namespace ns (backend of a.test/p1; backend of a.test/more)`}},
		{"the Ingress made again under the same name", func(t *testing.T) {
			again := ing.DeepCopy()
			again.UID = types.UID("uid-2")
			must(t, h.ingresses.Update(again))
		}, []string{ghost, noSecret}},
		{"the Service appears", func(t *testing.T) { must(t, h.services.Add(service("ghost", web))) }, nil},
		{"the Ingress goes", func(t *testing.T) { must(t, h.ingresses.Delete(ing)) }, nil},
	}
	for _, s := range steps {
		s.change(t)
		if got := h.sync(t); !slices.Equal(got, s.want) {
			t.Errorf("%s: events:\n%q\nwant:\n%q", s.name, got, s.want)
		}
	}
	if len(h.c.warned) != 0 {
		t.Errorf("reports kept after the Ingress went: %v", h.c.warned)
	}
}

func TestUses(t *testing.T) {
	ing := withDefault(withTLS(ingress("a.test", byNumber("alpha", 80)), networkingv1.IngressTLS{SecretName: "a-tls"}), byNumber("fallback", 80))
	for _, tt := range []struct {
		name string
		uses func(*networkingv1.Ingress, string) bool
		ref  string
		want bool
	}{
		{"a path's Service", usesService, "alpha", true},
		{"the default backend's Service", usesService, "fallback", true},
		{"another Service", usesService, "beta", false},
		{"a TLS Secret", usesSecret, "a-tls", true},
		{"a Secret's name is not a Service's", usesService, "a-tls", false},
		{"another Secret", usesSecret, "b-tls", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.uses(ing, tt.ref); got != tt.want {
				t.Errorf("uses %q = %v, want %v", tt.ref, got, tt.want)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
