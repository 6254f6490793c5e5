package server

import (
	"net/http"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

func TestDrain(t *testing.T) {
	pod := func(name, node string, mutate ...func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"}, Spec: corev1.PodSpec{NodeName: node}}
		for _, m := range mutate {
			m(p)
		}
		return p
	}
	owned := func(apiVersion, kind string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: "x", UID: "u", Controller: ptr.To(true)}}
		}
	}
	cs := fake.NewClientset(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}},
		pod("web", "n1", owned("apps/v1", "ReplicaSet")),
		pod("bare", "n1"),
		pod("guarded", "n1"),
		pod("forbidden", "n1"),
		pod("agent", "n1", owned("apps/v1", "DaemonSet")),
		pod("static-n1", "n1", func(p *corev1.Pod) { p.Annotations = map[string]string{mirrorAnnotation: "abc"} }),
		pod("leaving", "n1", func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.Now()); p.Finalizers = []string{"x"} }),
		pod("elsewhere", "n2"),
	)
	// The fake tracker ignores field selectors: the apiserver's answer, the
	// node's pods only, is made here.
	cs.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj, err := cs.Tracker().List(corev1.SchemeGroupVersion.WithResource("pods"), corev1.SchemeGroupVersion.WithKind("Pod"), "")
		if err != nil {
			return true, nil, err
		}
		list := obj.(*corev1.PodList)
		list.Items = slices.DeleteFunc(list.Items, func(p corev1.Pod) bool { return p.Spec.NodeName != "n1" })
		return true, list, nil
	})
	var evicted []string
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		name := a.(k8stesting.CreateAction).GetObject().(metav1.Object).GetName()
		switch name {
		case "guarded":
			return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		case "forbidden":
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods/eviction"}, name, nil)
		}
		evicted = append(evicted, name)
		return true, nil, nil
	})

	r, err := drain(t.Context(), cs, "n1")
	if err != nil {
		t.Fatal(err)
	}
	names := func(rs []PodResult) []string {
		var out []string
		for _, x := range rs {
			out = append(out, x.Name)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name string
		got  []PodResult
		want []string
	}{
		{"evicted", r.Evicted, []string{"bare", "web"}},
		{"skipped", r.Skipped, []string{"agent", "leaving", "static-n1"}},
		{"refused by a PodDisruptionBudget", r.Refused, []string{"guarded"}},
		{"failed", r.Failed, []string{"forbidden"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(tc.got); !slices.Equal(got, tc.want) {
				t.Errorf("%v, want %v", got, tc.want)
			}
			for _, x := range tc.got {
				if tc.name != "evicted" && x.Reason == "" {
					t.Errorf("%s has no reason", x.Name)
				}
			}
		})
	}
	if slices.Sort(evicted); !slices.Equal(evicted, []string{"bare", "web"}) {
		t.Errorf("Eviction API called for %v", evicted)
	}
	n, err := cs.CoreV1().Nodes().Get(t.Context(), "n1", metav1.GetOptions{})
	if err != nil || !n.Spec.Unschedulable {
		t.Errorf("node not cordoned: %v %v", n.Spec, err)
	}
}

func TestDrainRefusesNonNodePaths(t *testing.T) {
	s, f, _ := newServer(t)
	cookies := []*http.Cookie{sessionCookie(t, s, "good"), {Name: CSRFCookie, Value: csrfValue}}
	hdr := map[string]string{CSRFHeader: csrfValue, "Content-Type": "application/json"}
	for _, path := range []string{"/api/v1/namespaces/d/pods/p", "/api/v1/nodes/", "/api/v1/nodes/a/status"} {
		w := do(t, s.Handler(), "POST", "/api/action/drain", `{"path":"`+path+`"}`, hdr, cookies...)
		if w.Code != http.StatusBadRequest {
			t.Errorf("drain %s = %d %s, want 400", path, w.Code, w.Body)
		}
	}
	if len(f.paths) != 0 {
		t.Errorf("reached the apiserver: %v", f.paths)
	}
}
