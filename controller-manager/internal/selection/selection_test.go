package selection

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	esutil "k8s.io/endpointslice/util"
)

func newIndex(t *testing.T, objs ...any) *Index {
	t.Helper()
	f := informers.NewSharedInformerFactory(fake.NewClientset(), 0)
	pods, svcs, eps := f.Core().V1().Pods().Informer(), f.Core().V1().Services().Informer(), f.Discovery().V1().EndpointSlices().Informer()
	x, err := New(pods, svcs, eps)
	if err != nil {
		t.Fatal(err)
	}
	// A second controller over the same informers shares the indexes.
	if _, err := New(pods, svcs, eps); err != nil {
		t.Fatalf("second New: %v", err)
	}
	for _, o := range objs {
		var err error
		switch o.(type) {
		case *corev1.Pod:
			err = pods.GetIndexer().Add(o)
		case *corev1.Service:
			err = svcs.GetIndexer().Add(o)
		case *discoveryv1.EndpointSlice:
			err = eps.GetIndexer().Add(o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return x
}

func pod(ns, name string, l map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: l}}
}

func svc(ns, name string, sel map[string]string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{Selector: sel}}
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

var objects = []any{
	pod("a", "web-1", map[string]string{"app": "web", "tier": "front"}),
	pod("a", "web-2", map[string]string{"app": "web", "tier": "back"}),
	pod("a", "db-1", map[string]string{"app": "db"}),
	pod("a", "bare", nil),
	pod("b", "web-1", map[string]string{"app": "web", "tier": "front"}),
	svc("a", "web", map[string]string{"app": "web"}),
	svc("a", "front", map[string]string{"app": "web", "tier": "front"}),
	svc("a", "everything", map[string]string{}),
	svc("a", "selectorless", nil),
	svc("b", "web", map[string]string{"app": "web"}),
}

func TestPods(t *testing.T) {
	x := newIndex(t, objects...)
	tests := []struct {
		name string
		ns   string
		sel  map[string]string
		want []string
	}{
		{"one pair", "a", map[string]string{"app": "web"}, []string{"web-1", "web-2"}},
		{"every pair must match", "a", map[string]string{"app": "web", "tier": "front"}, []string{"web-1"}},
		{"no pod carries a pair", "a", map[string]string{"app": "web", "tier": "none"}, nil},
		{"empty selector selects every pod", "a", map[string]string{}, []string{"bare", "db-1", "web-1", "web-2"}},
		{"other namespace", "b", map[string]string{"app": "web"}, []string{"web-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := x.Pods(tt.ns, tt.sel)
			if err != nil {
				t.Fatal(err)
			}
			if n := names(got); !slices.Equal(n, tt.want) {
				t.Errorf("pods = %v, want %v", n, tt.want)
			}
		})
	}
}

func TestServicesToUpdate(t *testing.T) {
	x := newIndex(t, objects...)
	tests := []struct {
		name string
		key  *esutil.PodProjectionKey
		want []string
	}{
		{"pod of two services", &esutil.PodProjectionKey{Namespace: "a", Labels: labels.Set{"app": "web", "tier": "front"}},
			[]string{"a/everything", "a/front", "a/web"}},
		{"unlabelled pod: empty selector only", &esutil.PodProjectionKey{Namespace: "a", Labels: nil}, []string{"a/everything"}},
		{"other namespace", &esutil.PodProjectionKey{Namespace: "b", Labels: labels.Set{"app": "web"}}, []string{"b/web"}},
		{"labels changed only: services gained or lost", &esutil.PodProjectionKey{Namespace: "a",
			Labels: labels.Set{"app": "web", "tier": "front"}, OldLabels: labels.Set{"app": "web"}}, []string{"a/front"}},
		{"labels and pod changed: all of both", &esutil.PodProjectionKey{Namespace: "a", PodChanged: true,
			Labels: labels.Set{"app": "db"}, OldLabels: labels.Set{"app": "web"}}, []string{"a/everything", "a/web"}},
		{"no key", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := x.ServicesToUpdate(tt.key)
			if err != nil {
				t.Fatal(err)
			}
			var list []string
			for k := range got {
				list = append(list, k)
			}
			slices.Sort(list)
			if !slices.Equal(list, tt.want) {
				t.Errorf("services = %v, want %v", list, tt.want)
			}
		})
	}
}

func TestSlices(t *testing.T) {
	slice := func(ns, name, svc string) *discoveryv1.EndpointSlice {
		s := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if svc != "" {
			s.Labels = map[string]string{discoveryv1.LabelServiceName: svc}
		}
		return s
	}
	x := newIndex(t, slice("a", "web-1", "web"), slice("a", "web-2", "web"), slice("a", "db-1", "db"),
		slice("b", "web-1", "web"), slice("a", "orphan", ""))
	got, err := x.Slices("a", "web")
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, s := range got {
		n = append(n, s.Namespace+"/"+s.Name)
	}
	slices.Sort(n)
	if want := []string{"a/web-1", "a/web-2"}; !slices.Equal(n, want) {
		t.Errorf("slices = %v, want %v", n, want)
	}
}
